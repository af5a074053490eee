// Pub/sub fan-out load generator (redis-benchmark cannot subscribe): N subscribers on one channel,
// one publisher keeping a window of PUBLISHes of a fixed-size message in flight. Subscribers are
// read by a few threads (epoll); messages delivered are counted from the bytes received (every
// message frame has the same size). Prints one line:
//   published=<n> delivered=<n> seconds=<s> delivered_per_sec=<n> lost=<n>
//
//   pubsub_load --port 6379 [--subscribers 100] [--size 64] [--seconds 5] [--window 64]
//               [--readers 2]
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    std::perror("connect");
    std::exit(1);
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

std::string Command(const std::vector<std::string>& args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return out;
}

void WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n <= 0) {
      std::perror("write");
      std::exit(1);
    }
    off += static_cast<size_t>(n);
  }
}

void ReadExactly(int fd, size_t n) {
  std::string buf(n, '\0');
  size_t got = 0;
  while (got < n) {
    const ssize_t r = read(fd, buf.data() + got, n - got);
    if (r <= 0) {
      std::perror("read");
      std::exit(1);
    }
    got += static_cast<size_t>(r);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int port = 6379, subscribers = 100, size = 64, window = 64, readers = 2;
  double seconds = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const double v = std::atof(argv[i + 1]);
    if (k == "--port") port = static_cast<int>(v);
    if (k == "--subscribers") subscribers = static_cast<int>(v);
    if (k == "--size") size = static_cast<int>(v);
    if (k == "--seconds") seconds = v;
    if (k == "--window") window = static_cast<int>(v);
    if (k == "--readers") readers = static_cast<int>(v);
  }
  const std::string channel = "fanout";
  const std::string message(static_cast<size_t>(size), 'm');
  const size_t frame = Command({"message", channel, message}).size();

  std::vector<int> subs;
  for (int i = 0; i < subscribers; ++i) {
    subs.push_back(Connect(port));
    WriteAll(subs.back(), Command({"SUBSCRIBE", channel}));
  }
  for (int fd : subs) ReadExactly(fd, Command({"subscribe", channel}).size() + 4);  // ":1\r\n"

  std::atomic<uint64_t> received_bytes{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < readers; ++t) {
    threads.emplace_back([&, t] {
      const int ep = epoll_create1(0);
      for (int i = t; i < subscribers; i += readers) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = subs[i];
        epoll_ctl(ep, EPOLL_CTL_ADD, subs[i], &ev);
      }
      std::vector<char> buf(1 << 20);
      epoll_event events[128];
      while (!stop.load(std::memory_order_relaxed)) {
        const int n = epoll_wait(ep, events, 128, 50);
        for (int e = 0; e < n; ++e) {
          const ssize_t r = read(events[e].data.fd, buf.data(), buf.size());
          if (r > 0) received_bytes.fetch_add(static_cast<uint64_t>(r), std::memory_order_relaxed);
        }
      }
      close(ep);
    });
  }

  // The publisher: a window of PUBLISHes in flight; each reply is ":<receivers>\r\n".
  const int pub = Connect(port);
  const std::string publish = Command({"PUBLISH", channel, message});
  uint64_t published = 0, replied = 0, lost = 0;
  std::string batch;
  std::vector<char> rbuf(1 << 16);
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  uint64_t bytes_at_start = received_bytes.load();
  while (std::chrono::steady_clock::now() < end) {
    batch.clear();
    while (published - replied < static_cast<uint64_t>(window)) {
      batch += publish;
      ++published;
    }
    if (!batch.empty()) WriteAll(pub, batch);
    const ssize_t r = read(pub, rbuf.data(), rbuf.size());
    if (r <= 0) {
      std::perror("publisher read");
      return 1;
    }
    for (ssize_t i = 0; i < r; ++i) {
      if (rbuf[i] != '\n') continue;
      ++replied;
    }
  }
  // Wait for the replies in flight, then let the subscribers drain what was published.
  while (replied < published) {
    const ssize_t r = read(pub, rbuf.data(), rbuf.size());
    if (r <= 0) break;
    for (ssize_t i = 0; i < r; ++i) replied += rbuf[i] == '\n';
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const uint64_t expected = published * static_cast<uint64_t>(subscribers);
  const auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((received_bytes.load() - bytes_at_start) / frame < expected &&
         std::chrono::steady_clock::now() < drain_deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const double drained =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stop = true;
  for (auto& t : threads) t.join();
  const uint64_t delivered = (received_bytes.load() - bytes_at_start) / frame;
  lost = expected > delivered ? expected - delivered : 0;
  std::printf("published=%llu delivered=%llu seconds=%.3f delivered_per_sec=%.0f lost=%llu\n",
              static_cast<unsigned long long>(published),
              static_cast<unsigned long long>(delivered), drained, delivered / drained,
              static_cast<unsigned long long>(lost));
  (void)elapsed;
  return 0;
}
