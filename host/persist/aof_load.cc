// Replaying append-only files at startup (aof.h): RESP commands run through the engine's command
// table with the whole keyspace held in batches, MULTI/EXEC groups applied whole or not at all.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <memory>

#include "host/persist/aof.h"
#include "host/persist/rdb_file.h"
#include "spdlog/spdlog.h"

namespace vessel::persist {
namespace {

using engine::Cat;

// Parses one RESP multibulk command at *pos. 1 = parsed, 0 = incomplete input (a truncated
// tail), -1 = malformed.
int ParseCommand(std::string_view data, size_t* pos, std::vector<std::string_view>* argv) {
  argv->clear();
  size_t p = *pos;
  auto line = [&](char prefix, int64_t* n) -> int {
    if (p >= data.size()) return 0;
    if (data[p] != prefix) return -1;
    const size_t end = data.find("\r\n", p);
    if (end == std::string_view::npos) return data.size() - p > 32 ? -1 : 0;
    if (!engine::ParseInt64(data.substr(p + 1, end - p - 1), n)) return -1;
    p = end + 2;
    return 1;
  };
  int64_t count;
  if (int r = line('*', &count); r != 1) return r;
  if (count < 1 || count > (int64_t{1} << 20)) return -1;
  for (int64_t i = 0; i < count; ++i) {
    int64_t len;
    if (int r = line('$', &len); r != 1) return r;
    if (len < 0 || len > (int64_t{1} << 40)) return -1;
    if (data.size() - p < static_cast<size_t>(len) + 2) return 0;
    if (data.substr(p + len, 2) != "\r\n") return -1;
    argv->push_back(data.substr(p, static_cast<size_t>(len)));
    p += static_cast<size_t>(len) + 2;
  }
  *pos = p;
  return 1;
}

class Replayer {
 public:
  explicit Replayer(engine::Engine& e) : e_(e), w_(&scratch_, 2) {
    ctx_.engine = &e;
    ctx_.db = &e.db(0);
    ctx_.w = &w_;
    ctx_.world = true;
    ctx_.internal = true;
    ctx_.now_ms = e.Now();
  }
  // Runs one command; "" or the reason the file cannot be loaded.
  std::string Run(const std::vector<std::string_view>& argv) {
    if (world_ == nullptr || ++batch_ % 1024 == 0) {
      world_.reset();
      world_ = std::make_unique<engine::WorldExclusive>(&e_);
      ctx_.now_ms = e_.Now();
    }
    if (engine::EqualsIgnoreCase(argv[0], "select")) {
      int64_t db;
      if (argv.size() != 2 || !engine::ParseInt64(argv[1], &db) || db < 0 || db >= e_.db_count())
        return Cat("invalid SELECT");
      ctx_.db = &e_.db(static_cast<int>(db));
      return "";
    }
    scratch_.clear();
    out_.clear();
    if (!e_.Call(&ctx_, argv, 2, &out_) && out_.find("Unknown") != std::string::npos)
      return Cat("Unknown command '", argv[0], "'");
    return "";
  }

 private:
  engine::Engine& e_;
  std::string scratch_, out_;
  resp::Writer w_;
  engine::CommandCtx ctx_;
  std::unique_ptr<engine::WorldExclusive> world_;
  uint64_t batch_ = 0;
};

}  // namespace

bool ReplayAofFile(engine::Engine& e, const std::string& path, bool last, bool truncate_ok,
                   AofLoadResult* result, std::string* error) {
  std::string data, why;
  if (!ReadWholeFile(path, &data, &why)) {
    *error = why.empty() ? Cat(path, ": No such file or directory") : why;
    return false;
  }
  size_t pos = 0;
  if (data.compare(0, 5, "REDIS") == 0) {
    // An RDB preamble (aof-use-rdb-preamble): the snapshot, then commands.
    LoadStats stats;
    if (!LoadRdbBytes(e, data, /*aof_base=*/true, &stats, &why)) {
      *error = Cat(path, ": ", why);
      return false;
    }
    pos = stats.bytes;
  }
  Replayer replay(e);
  std::vector<std::string_view> argv;
  std::vector<std::vector<std::string>> multi;  // a MULTI group being read
  bool in_multi = false;
  size_t valid = pos;  // end of the last complete command outside a MULTI group
  while (pos < data.size()) {
    const size_t at = pos;
    const int r = ParseCommand(data, &pos, &argv);
    if (r == 0) break;  // incomplete tail
    if (r < 0) {
      *error = Cat("Bad file format reading the append only file ", path, " at offset ", at,
                   ": make a backup of your AOF file, then use redis-check-aof --fix");
      return false;
    }
    ++result->commands;
    if (engine::EqualsIgnoreCase(argv[0], "multi")) {
      in_multi = true;
      multi.clear();
      continue;
    }
    if (in_multi && !engine::EqualsIgnoreCase(argv[0], "exec")) {
      multi.emplace_back(argv.begin(), argv.end());
      continue;
    }
    if (in_multi) {
      for (const auto& cmd : multi) {
        std::vector<std::string_view> a(cmd.begin(), cmd.end());
        if (std::string err = replay.Run(a); !err.empty()) {
          *error = Cat(err, " reading the append only file ", path, " at offset ", at);
          return false;
        }
      }
      in_multi = false;
      multi.clear();
    } else if (std::string err = replay.Run(argv); !err.empty()) {
      *error = Cat(err, " reading the append only file ", path, " at offset ", at);
      return false;
    }
    valid = pos;
  }
  if (valid < data.size()) {
    // A truncated last command (or an unfinished MULTI group): cut it off when allowed.
    if (!last || !truncate_ok) {
      *error = Cat("Unexpected end of file reading the append only file ", path, " at offset ",
                   valid, last ? " (aof-load-truncated is no)" : "");
      return false;
    }
    spdlog::warn(
        "!!! Warning: short read while loading the AOF file {}!!! Truncating the AOF at "
        "offset {}",
        path, valid);
    if (truncate(path.c_str(), static_cast<off_t>(valid)) != 0) {
      *error = Cat("Error truncating the AOF file ", path, ": ", std::strerror(errno));
      return false;
    }
    result->truncated = true;
  }
  return true;
}

}  // namespace vessel::persist
