// The append-only file: manifest, group-commit writer, replay (aof.h).
#include "host/persist/aof.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <memory>

#include "host/persist/rdb_file.h"
#include "spdlog/spdlog.h"

namespace vessel::persist {

using engine::Cat;

// ---- manifest ----

const AofFile* AofManifest::base() const {
  for (const AofFile& f : files)
    if (f.type == 'b') return &f;
  return nullptr;
}

uint64_t AofManifest::last_incr_seq() const {
  uint64_t seq = 0;
  for (const AofFile& f : files)
    if (f.type == 'i') seq = std::max(seq, f.seq);
  return seq;
}

std::string AofManifest::Text() const {
  std::string out;
  for (const AofFile& f : files)
    out += Cat("file ", f.name, " seq ", f.seq, " type ", f.type, "\n");
  return out;
}

bool AofManifest::Parse(std::string_view text, AofManifest* out, std::string* error) {
  out->files.clear();
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> words = engine::SplitWords(line);
    AofFile f;
    bool has_type = false;
    for (size_t i = 0; i + 1 < words.size(); i += 2) {
      if (words[i] == "file") {
        f.name = words[i + 1];
      } else if (words[i] == "seq") {
        int64_t v;
        if (!engine::ParseInt64(words[i + 1], &v) || v < 0) break;
        f.seq = static_cast<uint64_t>(v);
      } else if (words[i] == "type" && words[i + 1].size() == 1) {
        f.type = words[i + 1][0];
        has_type = true;
      }
    }
    if (words.size() % 2 != 0 || f.name.empty() || !has_type || f.seq == 0 ||
        (f.type != 'b' && f.type != 'h' && f.type != 'i') ||
        f.name.find('/') != std::string::npos) {
      *error = Cat("Invalid AOF manifest file format (line ", line_no, ")");
      return false;
    }
    if (f.type != 'h') out->files.push_back(std::move(f));
  }
  // The base first, then the incremental files by sequence.
  std::stable_sort(out->files.begin(), out->files.end(), [](const AofFile& a, const AofFile& b) {
    if ((a.type == 'b') != (b.type == 'b')) return a.type == 'b';
    return a.seq < b.seq;
  });
  return true;
}

bool ReadWholeFile(const std::string& path, std::string* text, std::string* error) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) *error = Cat(path, ": ", std::strerror(errno));
    return false;
  }
  text->clear();
  char buf[65536];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = Cat(path, ": ", std::strerror(errno));
      close(fd);
      return false;
    }
    if (n == 0) break;
    text->append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return true;
}

namespace {

bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const int64_t budget = g_fail_writes_after.load(std::memory_order_relaxed);
    size_t n = data.size();
    if (budget >= 0 && static_cast<int64_t>(n) > budget) {
      if (budget == 0) {
        errno = ENOSPC;
        return false;
      }
      n = static_cast<size_t>(budget);
    }
    const ssize_t w = write(fd, data.data(), n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (budget >= 0) g_fail_writes_after.fetch_sub(w, std::memory_order_relaxed);
    data.remove_prefix(static_cast<size_t>(w));
  }
  return true;
}

void FsyncDir(const std::string& dir) {
  const int dfd = open(dir.c_str(), O_RDONLY | O_CLOEXEC);
  if (dfd >= 0) {
    fsync(dfd);
    close(dfd);
  }
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

bool WriteFileAtomic(const std::string& dir, const std::string& name, std::string_view text,
                     std::string* error) {
  const std::string tmp = Cat(dir, "/temp-", name);
  const std::string path = Cat(dir, "/", name);
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = Cat("Can't open ", tmp, ": ", std::strerror(errno));
    return false;
  }
  const bool ok = WriteAll(fd, text) && fsync(fd) == 0;
  const int err = errno;
  close(fd);
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    *error = Cat("Can't write ", path, ": ", std::strerror(ok ? errno : err));
    unlink(tmp.c_str());
    return false;
  }
  FsyncDir(dir);
  return true;
}

void AppendResp(std::string* out, const std::string_view* argv, size_t argc) {
  constexpr size_t kHeader = 1 + 20 + 2;  // '*' or '$', a length, CRLF
  size_t bytes = kHeader;
  for (size_t i = 0; i < argc; ++i) bytes += kHeader + argv[i].size() + 2;
  const size_t start = out->size();
  out->resize(start + bytes);  // an upper bound, trimmed below
  char* p = out->data() + start;
  auto header = [&p](char kind, size_t n) {
    *p++ = kind;
    p = std::to_chars(p, p + 20, n).ptr;
    *p++ = '\r';
    *p++ = '\n';
  };
  header('*', argc);
  for (size_t i = 0; i < argc; ++i) {
    header('$', argv[i].size());
    if (!argv[i].empty()) std::memcpy(p, argv[i].data(), argv[i].size());
    p += argv[i].size();
    *p++ = '\r';
    *p++ = '\n';
  }
  out->resize(static_cast<size_t>(p - out->data()));
}

// ---- writer ----

AofWriter::~AofWriter() { Close(); }

bool AofWriter::Open(const std::string& path, FsyncPolicy policy, std::string* error) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = Cat("Can't open the append-only file ", path, ": ", std::strerror(errno));
    return false;
  }
  FsyncDir(DirOf(path));
  struct stat st;
  fstat(fd, &st);
  std::lock_guard l(mu_);
  fd_ = fd;
  policy_ = policy;
  file_size_ = static_cast<uint64_t>(st.st_size);
  last_db_ = -1;
  stop_ = false;
  error_.clear();
  PublishLocked();
  if (!fsync_thread_.joinable()) fsync_thread_ = std::thread([this] { FsyncLoop(); });
  return true;
}

bool AofWriter::SwitchTo(const std::string& path, std::string* error) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = Cat("Can't open the append-only file ", path, ": ", std::strerror(errno));
    return false;
  }
  FsyncDir(DirOf(path));
  std::unique_lock l(mu_);
  cv_.wait(l, [this] { return !leader_; });  // never close the file under a leader's write
  if (fd_ >= 0) {
    if (!pending_.empty() && WriteAll(fd_, pending_)) {
      written_ = appended_;
      pending_.clear();
    }
    fdatasync(fd_);
    synced_ = written_;
    close(fd_);
    PublishLocked();
  }
  // Bytes that could not be written to the old file go to the new one.
  fd_ = fd;
  file_size_ = 0;
  last_db_ = -1;
  return true;
}

void AofWriter::Close() {
  {
    std::unique_lock l(mu_);
    cv_.wait(l, [this] { return !leader_; });
    if (fd_ >= 0) {
      if (!pending_.empty() && WriteAll(fd_, pending_)) {
        pending_.clear();
        written_ = appended_;
      }
      if (fdatasync(fd_) == 0) synced_ = written_;
      close(fd_);
      fd_ = -1;
      PublishLocked();
    }
    stop_ = true;
  }
  fsync_cv_.notify_all();
  if (fsync_thread_.joinable()) fsync_thread_.join();
}

bool AofWriter::is_open() const {
  std::lock_guard l(mu_);
  return fd_ >= 0;
}

void AofWriter::set_policy(FsyncPolicy p) {
  std::lock_guard l(mu_);
  policy_ = p;
  PublishLocked();
}

void AofWriter::Append(int db, std::string_view records, int end_db) {
  std::lock_guard l(mu_);
  if (fd_ < 0) return;
  const size_t before = pending_.size();
  if (db >= 0 && db != last_db_) {
    const std::string n = std::to_string(db);
    AppendResp(&pending_, {"SELECT", n});
    last_db_ = db;
  }
  pending_.append(records);
  if (end_db != -2) last_db_ = end_db;
  // A byte count that only grows: a leader may be writing earlier bytes right now (taken out of
  // pending_ but not yet counted in written_), so the target is not written_ + pending_.size().
  appended_ += pending_.size() - before;
  PublishLocked();
}

void AofWriter::MakeDurable() {
  std::unique_lock l(mu_);
  if (fd_ < 0) return;
  if (!FlushLocked(l, appended_, policy_ == FsyncPolicy::kAlways) &&
      policy_ == FsyncPolicy::kAlways) {
    // As Redis: with `always` a write that cannot reach the disk must not be acknowledged.
    spdlog::critical(
        "Can't recover from AOF write error when the AOF fsync policy is 'always' ({}). "
        "Exiting...",
        error_);
    _exit(1);
  }
}

void AofWriter::PublishLocked() {
  appended_pub_.store(appended_, std::memory_order_release);
  durable_pub_.store(policy_ == FsyncPolicy::kAlways ? synced_ : written_,
                     std::memory_order_release);
}

bool AofWriter::FlushLocked(std::unique_lock<std::mutex>& l, uint64_t target, bool sync) {
  while (written_ < target || (sync && synced_ < target)) {
    if (!error_.empty()) return false;
    if (leader_) {
      cv_.wait(l);
      continue;
    }
    // Leader: write everything buffered so far (other writers' bytes too) in one go.
    leader_ = true;
    std::string buf;
    buf.swap(pending_);
    const uint64_t upto = appended_;  // one leader at a time: pending_ held (written_, appended_]
    const int fd = fd_;
    l.unlock();
    bool ok = WriteAll(fd, buf);
    int err = errno;
    if (ok && sync && fdatasync(fd) != 0) {
      ok = false;
      err = errno;
    }
    l.lock();
    leader_ = false;
    if (ok) {
      written_ = upto;
      file_size_ += buf.size();
      if (sync) synced_ = upto;
      PublishLocked();
    } else {
      // Kept for a retry: the file may hold part of it (Redis truncates; appending again after a
      // partial write would duplicate it, so the retry rewrites from the old size).
      pending_.insert(0, buf);
      if (ftruncate(fd, static_cast<off_t>(file_size_)) != 0) {
      }
      error_ = std::strerror(err);
      spdlog::error("Error writing to the AOF file: {}", error_);
    }
    cv_.notify_all();
  }
  return true;
}

bool AofWriter::Retry() {
  std::unique_lock l(mu_);
  if (fd_ < 0 || error_.empty()) return error_.empty();
  error_.clear();
  return FlushLocked(l, appended_, true);
}

void AofWriter::FsyncLoop() {
  std::unique_lock l(mu_);
  while (!stop_) {
    fsync_cv_.wait_for(l, std::chrono::seconds(1));
    if (stop_ || fd_ < 0) continue;
    // Records no reply waited for (active expiry's DEL, ...) reach the file within a second.
    if (written_ < appended_ && error_.empty() && !leader_)
      FlushLocked(l, appended_, policy_ == FsyncPolicy::kAlways);
    if (stop_ || fd_ < 0 || policy_ != FsyncPolicy::kEverySec || synced_ >= written_) continue;
    const int fd = fd_;
    const uint64_t upto = written_;
    l.unlock();
    const bool ok = fdatasync(fd) == 0;
    l.lock();
    if (ok && fd == fd_) synced_ = std::max(synced_, upto);
    PublishLocked();
  }
}

uint64_t AofWriter::size() const {
  std::lock_guard l(mu_);
  return file_size_;
}

std::string AofWriter::last_error() const {
  std::lock_guard l(mu_);
  return error_;
}

bool AofWriter::write_ok() const {
  std::lock_guard l(mu_);
  return error_.empty();
}

uint64_t AofWriter::fsync_delayed() const { return 0; }

}  // namespace vessel::persist
