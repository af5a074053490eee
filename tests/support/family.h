// What the command tests of a value family that is not a Redis family (vectors, deque, omap, bag,
// multimap) share: short expectations, a reply's elements as strings, a vessel-only table run in
// both protocols, a command compared with its Redis twin, the serialized form of (field, value)
// pairs, and the check of a module's command table as COMMAND INFO, COMMAND DOCS, COMMAND LIST
// and ACL CAT show it. Include it only where no test defines these names itself.
#ifndef VESSEL_TESTS_SUPPORT_FAMILY_H_
#define VESSEL_TESTS_SUPPORT_FAMILY_H_

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/servers.h"

namespace vessel::test {

// Redis's arity error for a command given in lower case.
Expect Arity(const std::string& lower_name);
Expect Queued();
std::string Str(int64_t v);
std::string Lower(std::string s);
// The elements of an array or map reply as strings (integers as their decimal text).
Strings Elements(const Reply& r);

// Runs rows on vessel in RESP2, then (after a reset) in RESP3.
void RunBothProtocols(const std::vector<Row>& rows);

// The keys of a pairs reply (its even positions), so it compares with a member list; an error
// stays as it is.
Reply FieldsOf(Reply r);
// Runs a command on vessel and its twin on redis-server, expecting the same reply: with `fields`
// vessel's pairs reply reduced to its keys (and redis's with `redis_fields`), an error text with
// the command's own name in place of the twin's.
void Twin(RespClient& v, RespClient& r, const Strings& ours, const Strings& redis,
          bool fields = false, bool redis_fields = false);

// The keyspace events (classes d and g, and "new") that running `cmds` on vessel fires, each as
// "<event> <key>", in order.
Strings KeyeventsOf(const std::vector<Strings>& cmds);

// The serialized form of (field, value) pairs, as vessel/ordered/pairs.h writes it.
std::string EncodedPairs(const std::vector<std::pair<std::string, std::string>>& pairs);

// A value type's callbacks keep `bytes` as they are: loaded (of `encoding` when given), saved back,
// copied and saved again.
void ExpectRoundTrip(const TypeCallbacks& type, const std::string& bytes,
                     const char* encoding = nullptr);
// The type's loading refuses every input of `bad` (why, bytes).
void ExpectRefused(const TypeCallbacks& type,
                   const std::vector<std::pair<std::string, std::string>>& bad);
// Runs each command, which creates the key at its argument 1, and checks with ExpectEntryOverheads
// that the key's MEMORY USAGE is the module's allocation growth plus the host's entry; returns
// those entry sizes, one per command.
std::vector<int64_t> ExpectMemoryUsageMatches(RespClient& c, const std::string& module,
                                              const std::vector<Strings>& creates);
// After FLUSHALL the module's allocation returns to `base` once a lazy free has finished:
// nothing leaked.
void ExpectFlushFreesAll(RespClient& c, const std::string& module, int64_t base);

// The seed of a randomized model test: the environment variable `env` when set (to replay a
// failure), else `fallback`.
uint64_t SeedFromEnv(const char* env, uint64_t fallback);
// The key `create` makes (its argument 1) expires as any key does: read after its time it is
// gone, and left alone it is removed by the active expiry cycle.
void ExpectExpires(RespClient& c, const Strings& create);
// A randomized model test on vessel: `steps` commands from next(), each sent to vessel and given
// to apply() (the model's reply), the two replies equal; every `check_every` steps and after the
// last, check() compares whole values. Stops at the first failure, which names `label` (the seed)
// and the step.
void RunModelTest(const std::string& label, int steps, int check_every,
                  const std::function<Strings()>& next,
                  const std::function<Reply(const Strings&)>& apply,
                  const std::function<void(RespClient&)>& check);

// A command as COMMAND INFO shows it: its arity, its flags and its first key spec's flags.
struct CommandInfo {
  std::string name;
  int arity;
  std::set<std::string> flags;
  std::set<std::string> key_flags;
};
// Checks that the module's commands are exactly `commands` (COMMAND LIST FILTERBY MODULE), each
// as COMMAND INFO shows it with the module's own ACL category @<module>, documented by COMMAND
// DOCS (group, module, a complexity, arguments), and that ACL CAT <module> lists them all.
void ExpectCommandTable(const std::string& module, const std::string& group,
                        const std::vector<CommandInfo>& commands);

}  // namespace vessel::test

#endif  // VESSEL_TESTS_SUPPORT_FAMILY_H_
