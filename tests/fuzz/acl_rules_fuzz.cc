// Fuzzes the ACL rule language: arbitrary ACL SETUSER arguments (one per line of the input) are
// applied to a user over the real command table; the user's canonical description must then
// rebuild exactly the same user (the check Redis makes with a panic), and permission checks on
// arbitrary commands must not crash.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "host/acl/user.h"
#include "host/config/config.h"
#include "host/engine/engine.h"

namespace {

using vessel::acl::Catalog;
using vessel::acl::RuleError;
using vessel::acl::User;

struct World {
  std::unique_ptr<vessel::engine::Engine> engine;
  std::unique_ptr<Catalog> catalog;
  World() {
    vessel::config::Config cfg = vessel::config::Defaults();
    cfg.storage.databases = 1;
    cfg.storage.shards = 1;
    engine = std::make_unique<vessel::engine::Engine>(cfg);
    catalog = std::make_unique<Catalog>(engine->registry());
  }
};

std::vector<std::string> Lines(const uint8_t* data, size_t size) {
  std::vector<std::string> out(1);
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      out.emplace_back();
    } else {
      out.back() += static_cast<char>(data[i]);
    }
  }
  return out;
}

// Whether the description can be split back into the same rules (Redis has the same limits:
// patterns and first arguments with spaces, quotes or parentheses are ambiguous in it).
bool RoundTrips(const User& u) {
  for (const auto& s : u.selectors()) {
    for (const auto& k : s.keys) {
      if (k.pattern.find_first_of("()\"'\\") != std::string::npos) return false;
      // A "*" pattern reached through %R~* / %W~* (not allkeys) is printed "~*", which reads
      // back as allkeys and refuses the patterns after it: redis-server 7.0 describes
      // "%R~* %RW~* ~a" as "~* ~a" too, which ACL SETUSER then refuses.
      if (k.pattern == "*" && s.keys.size() > 1) return false;
    }
    for (const auto& c : s.channels)
      if (c.find_first_of("()\"'\\") != std::string::npos) return false;
    for (const auto& [id, args] : s.firstargs)
      for (const auto& a : args)
        if (a.find_first_of(" ()\"'\\\t\r\n\v\f") != std::string::npos) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World world;
  const Catalog& catalog = *world.catalog;
  std::vector<std::string> rules;
  size_t bad = 0;
  if (!vessel::acl::MergeSelectorArgs(Lines(data, size), &rules, &bad)) return 0;
  User u("fuzz", 1, false);
  for (const std::string& r : rules) {
    if (u.Apply(r, catalog, false) != RuleError::kOk) break;
  }
  u.Seal();
  const std::string described = vessel::acl::DescribeUser(u, catalog);
  if (RoundTrips(u)) {
    // The description applied to a fresh user describes a user whose description is a fixed
    // point. (Not always `described` itself: as in Redis, "~app:* ~*" reads back as "~*", since
    // "~*" is allkeys and drops the other patterns.)
    auto reapply = [&](const std::string& text) {
      std::vector<std::string> words, again;
      std::string word;
      for (char c : text + ' ') {
        if (c == ' ') {
          words.push_back(word);
          word.clear();
        } else {
          word += c;
        }
      }
      size_t where = 0;
      if (!vessel::acl::MergeSelectorArgs(words, &again, &where)) __builtin_trap();
      User v("fuzz", 1, false);
      for (const std::string& r : again)
        if (v.Apply(r, catalog, false) != RuleError::kOk) __builtin_trap();
      v.Seal();
      return vessel::acl::DescribeUser(v, catalog);
    };
    const std::string once = reapply(described);
    if (reapply(once) != once) __builtin_trap();
  }
  // Permission checks over the arguments as a command.
  const auto args = Lines(data, size);
  std::vector<std::string_view> argv(args.begin(), args.end());
  if (!argv.empty()) {
    if (const Catalog::Entry* e = catalog.Find(argv[0]);
        e != nullptr && e->spec->ArityOk(static_cast<int>(argv.size()))) {
      int pos = 0;
      vessel::acl::CheckCommand(u, *e->spec, argv.data(), static_cast<int>(argv.size()), &pos);
      if (pos < 0 || static_cast<size_t>(pos) >= argv.size()) __builtin_trap();
    }
    vessel::acl::CheckChannel(u, argv[0], size % 2 == 0);
  }
  return 0;
}
