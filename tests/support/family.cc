// The helpers of the value families' command tests (see family.h).
#include "tests/support/family.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>

#include "gtest/gtest.h"

namespace vessel::test {

Expect Arity(const std::string& lower_name) {
  return Error("ERR wrong number of arguments for '" + lower_name + "' command");
}

Expect Queued() { return Simple("QUEUED"); }

std::string Str(int64_t v) { return std::to_string(v); }

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  return s;
}

Strings Elements(const Reply& r) {
  Strings out;
  for (const Reply& e : r.elems)
    out.push_back(e.type == Reply::Type::kInt ? Str(e.integer) : e.str);
  return out;
}

void RunBothProtocols(const std::vector<Row>& rows) {
  RunVesselTable(rows);
  Servers::Get().Reset();
  RunVesselTable(rows, 3);
}

Reply FieldsOf(Reply r) {
  if (r.is_error()) return r;
  Reply out{Reply::Type::kArray, "", 0, {}};
  for (size_t i = 0; i < r.elems.size(); i += 2) out.elems.push_back(r.elems[i]);
  return out;
}

void Twin(RespClient& v, RespClient& r, const Strings& ours, const Strings& redis, bool fields,
          bool redis_fields) {
  Reply want = r.Cmd(redis);
  if (redis_fields) want = FieldsOf(want);
  const std::string named = "'" + Lower(redis[0]) + "'";
  if (want.is_error() && want.str.find(named) != std::string::npos)
    want.str.replace(want.str.find(named), named.size(), "'" + Lower(ours[0]) + "'");
  Reply got = v.Cmd(ours);
  if (fields) got = FieldsOf(got);
  EXPECT_EQ(got, want) << Show(ours) << " / " << Show(redis) << "\n  vessel: " << got.ToString()
                       << "\n  redis:  " << want.ToString();
}

Strings KeyeventsOf(const std::vector<Strings>& cmds) {
  RespClient admin = Servers::Get().Vessel();
  admin("CONFIG", "SET", "notify-keyspace-events", "KEdgn");
  RespClient listener = Servers::Get().Vessel();
  listener.Send({"PSUBSCRIBE", "__keyevent@0__:*"});
  listener.Read();
  RespClient c = Servers::Get().Vessel();
  for (const Strings& cmd : cmds) c.Cmd(cmd);
  Strings got;
  for (const Reply& r : ReadQuiet(listener, 300))
    got.push_back(r.elems.size() == 4 ? r.elems[2].str.substr(15) + " " + r.elems[3].str : "?");
  admin("CONFIG", "SET", "notify-keyspace-events", "");
  return got;
}

std::string EncodedPairs(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string s = U64(pairs.size());
  for (const auto& [f, v] : pairs) s += U64(f.size()) + f + U64(v.size()) + v;
  return s;
}

void ExpectRoundTrip(const TypeCallbacks& type, const std::string& bytes, const char* encoding) {
  void* v = type.Load(bytes);
  ASSERT_NE(v, nullptr) << bytes.size() << " bytes";
  if (encoding != nullptr) {
    EXPECT_STREQ(type.desc().encoding(nullptr, v), encoding);
  }
  EXPECT_EQ(type.Save(v), bytes);
  void* copy = type.desc().copy(nullptr, v);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(type.Save(copy), bytes);
  type.Free(copy);
  type.Free(v);
}

void ExpectRefused(const TypeCallbacks& type,
                   const std::vector<std::pair<std::string, std::string>>& bad) {
  for (const auto& [why, bytes] : bad) {
    void* v = type.Load(bytes);
    EXPECT_EQ(v, nullptr) << why;
    if (v != nullptr) type.Free(v);
  }
}

std::vector<int64_t> ExpectMemoryUsageMatches(RespClient& c, const std::string& module,
                                              const std::vector<Strings>& creates) {
  std::vector<int64_t> overheads;
  for (const Strings& cmd : creates) {
    const int64_t before = ModuleAllocated(c, module);
    c.Cmd(cmd);
    overheads.push_back(c("MEMORY", "USAGE", cmd[1]).integer -
                        (ModuleAllocated(c, module) - before));
  }
  ExpectEntryOverheads(overheads);
  return overheads;
}

void ExpectFlushFreesAll(RespClient& c, const std::string& module, int64_t base) {
  c("FLUSHALL");
  for (int i = 0; i < 200 && ModuleAllocated(c, module) != base; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(ModuleAllocated(c, module), base) << "leaked bytes";
}

void ExpectExpires(RespClient& c, const Strings& create) {
  const std::string& key = create.at(1);
  c.Cmd(create);
  EXPECT_EQ(c("PEXPIRE", key, "20").integer, 1) << create[0];
  EXPECT_GT(c("PTTL", key).integer, 0) << create[0];
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  EXPECT_EQ(c("TYPE", key).str, "none") << create[0];  // expired when read
  c.Cmd(create);
  c("PEXPIRE", key, "20");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (c("DBSIZE").integer != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(c("DBSIZE").integer, 0) << create[0] << ": not removed by the active expiry";
}

uint64_t SeedFromEnv(const char* env, uint64_t fallback) {
  const char* v = std::getenv(env);
  return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

void RunModelTest(const std::string& label, int steps, int check_every,
                  const std::function<Strings()>& next,
                  const std::function<Reply(const Strings&)>& apply,
                  const std::function<void(RespClient&)>& check) {
  RespClient c = Servers::Get().Vessel();
  for (int step = 0; step < steps; ++step) {
    const Strings cmd = next();
    const Reply want = apply(cmd);
    const Reply got = c.Cmd(cmd);
    ASSERT_EQ(got, want) << label << " step " << step << ": " << Show(cmd)
                         << "\n  vessel: " << got.ToString() << "\n  model:  " << want.ToString();
    if (step % check_every == 0 || step == steps - 1) {
      SCOPED_TRACE(label + " step " + Str(step));
      check(c);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

void ExpectCommandTable(const std::string& module, const std::string& group,
                        const std::vector<CommandInfo>& commands) {
  RespClient c = Servers::Get().Vessel();
  EXPECT_EQ(c("COMMAND", "LIST", "FILTERBY", "MODULE", module).elems.size(), commands.size());
  for (const CommandInfo& want : commands) {
    SCOPED_TRACE(want.name);
    const Reply r = c("COMMAND", "INFO", want.name);
    ASSERT_EQ(r.elems.size(), 1u);
    const Reply& info = r.elems[0];
    ASSERT_EQ(info.elems.size(), 10u) << r.ToString();
    EXPECT_EQ(info.elems[1].integer, want.arity);
    const Strings flags = Elements(info.elems[2]);
    EXPECT_EQ(std::set<std::string>(flags.begin(), flags.end()), want.flags);
    const Strings key_flags = Elements(info.elems[8].elems.at(0).elems.at(1));
    EXPECT_EQ(std::set<std::string>(key_flags.begin(), key_flags.end()), want.key_flags);
    const Strings acl = Elements(info.elems[6]);
    EXPECT_NE(std::find(acl.begin(), acl.end(), "@" + module), acl.end()) << info.ToString();
    const Reply docs = c("COMMAND", "DOCS", want.name);
    ASSERT_EQ(docs.elems.size(), 2u) << docs.ToString();
    std::map<std::string, Reply> d;
    for (size_t i = 0; i + 1 < docs.elems[1].elems.size(); i += 2)
      d[docs.elems[1].elems[i].str] = docs.elems[1].elems[i + 1];
    EXPECT_EQ(d["group"].str, group);
    EXPECT_EQ(d["module"].str, module);
    EXPECT_TRUE(d["complexity"].str.starts_with("O(")) << d["complexity"].str;
    EXPECT_FALSE(d["arguments"].elems.empty()) << docs.ToString();
  }
  const Reply cat = c("ACL", "CAT", module);
  EXPECT_EQ(cat.elems.size(), commands.size()) << cat.ToString();
}

}  // namespace vessel::test
