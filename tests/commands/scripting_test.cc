// EVAL, EVALSHA, SCRIPT, FUNCTION and FCALL against vessel and redis-server: conversions both
// ways, error texts and prefixes, the sandbox, script flags, the bundled libraries (cjson, bit,
// struct, cmsgpack) and FUNCTION DUMP/RESTORE payloads moving between the two servers.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/servers.h"

namespace vessel::test {
namespace {

class ScriptingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Servers::Get().Reset();
    for (int port : {Servers::Get().vessel_port(), Servers::Get().redis_port()}) {
      RespClient c("127.0.0.1", port);
      c("SCRIPT", "FLUSH");
      c("FUNCTION", "FLUSH");
    }
  }
};

Row Eval(std::string script, Expect e, std::vector<std::string> rest = {"0"}) {
  std::vector<std::string> cmd = {"EVAL", std::move(script)};
  cmd.insert(cmd.end(), rest.begin(), rest.end());
  return {cmd, std::move(e)};
}

TEST_F(ScriptingTest, LuaToReplyConversions) {
  RunTable({
      Eval("return 1", Int(1)),
      Eval("return 1.9", Int(1)),
      Eval("return -1.9", Int(-1)),
      Eval("return 'x'", Bulk("x")),
      Eval("return true", Int(1)),
      Eval("return false", Nil()),
      Eval("return nil", Nil()),
      Eval("return {1,2,nil,3}", Arr({Int(1), Int(2)})),
      Eval("return {1,false,3}", Arr({Int(1), Nil(), Int(3)})),
      Eval("return {1,'a',{2,{3}}}", Any()),
      Eval("return {ok='fine'}", Simple("fine")),
      Eval("return {err='MYERR oops'}", Error("MYERR oops")),
      Eval("return redis.status_reply('PONG')", Simple("PONG")),
      Eval("return redis.error_reply('bad')", Error("ERR bad")),
      Eval("return redis.error_reply('-CODE bad')", Error("CODE bad")),
      Eval("return {double=1.5}", Bulk("1.5")),
      Eval("return {big_number='123456789012345678901234567890'}", Any()),
      Eval("return {map={a=1}}", Arr({Bulk("a"), Int(1)})),
      Eval("return {set={a=true}}", Arr({Bulk("a")})),
      Eval("return 9007199254740993", Any()),
      Eval("return {}", Arr({})),
      Eval("return KEYS", BulkArr({"a", "b"}), {"2", "a", "b", "c"}),
      Eval("return ARGV", BulkArr({"c"}), {"2", "a", "b", "c"}),
  });
  RunTable({Eval("return {double=1.5}", Dbl("1.5")), Eval("return {map={a=1}}", Any()),
            Eval("return true", Any()),
            Eval("redis.setresp(3) return redis.call('hgetall', 'nokey')", Any()),
            Eval("return {big_number='12345678901234567890'}", Any()),
            Eval("return {verbatim_string={format='txt', string='hi'}}", Any())},
           3);
}

TEST_F(ScriptingTest, ReplyToLuaConversions) {
  RunTable({
      {{"SET", "s", "v"}, Ok()},
      {{"RPUSH", "l", "a", "b"}, Int(2)},
      {{"HSET", "h", "f", "v"}, Int(1)},
      Eval("return redis.call('get', 's')", Bulk("v")),
      Eval("return redis.call('get', 'nokey')", Nil()),
      Eval("return type(redis.call('get', 'nokey'))", Bulk("boolean")),
      Eval("return redis.call('set', 'x', 'y')", Ok()),
      Eval("return redis.call('set', 'x', 'y')['ok']", Bulk("OK")),
      Eval("return redis.call('lrange', 'l', 0, -1)", BulkArr({"a", "b"})),
      Eval("return redis.call('incr', 'n')", Int(1)),
      Eval("return redis.call('incrbyfloat', 'f', '1.5')", Bulk("1.5")),
      Eval("return redis.pcall('incr', 's')", Error("ERR value is not an integer or out of range")),
      Eval("return redis.pcall('incr', 's')['err']",
           Bulk("ERR value is not an integer or out of range")),
      Eval("redis.setresp(3); local r = redis.call('hgetall', 'h'); return r['map']['f']",
           Bulk("v")),
      Eval("redis.setresp(3); return type(redis.call('get', 'nokey'))", Bulk("nil")),
      Eval("redis.setresp(3); return redis.call('smembers', 'noset')['set'] ~= nil", Int(1)),
      Eval("return redis.call('set', 'n2', 10.5)", Ok()),
      {{"GET", "n2"}, Bulk("10.5")},
      Eval("return redis.call('set', 'n3', 3)", Ok()),
      {{"GET", "n3"}, Bulk("3")},
      Eval("return redis.call('select', 1)", Ok()),
      Eval("redis.call('select', 1); redis.call('set', 'db1', 'x'); return 1", Int(1)),
      {{"EXISTS", "db1"}, Int(0)},
      {{"SELECT", "1"}, Ok()},
      {{"GET", "db1"}, Bulk("x")},
      {{"SELECT", "0"}, Ok()},
  });
}

TEST_F(ScriptingTest, ErrorsAndPrefixes) {
  RunTable({
      Eval("return redis.call('nosuch')", Err("ERR Unknown Redis command called from script*")),
      Eval("return redis.call('get')", Err("ERR Wrong number of args calling Redis command*")),
      Eval("return redis.pcall('get')",
           Error("ERR Wrong number of args calling Redis command from script")),
      Eval("return redis.call()", Err("ERR Please specify at least one argument*")),
      Eval("return redis.call('get', {})", Err("ERR Lua redis lib command arguments must*")),
      Eval("return redis.call('blpop', 'l', 0)", Err("ERR This Redis command is not allowed*")),
      Eval("return redis.call('eval', 'return 1', 0)", Any()),
      Eval("return redis.call('multi')", Err("ERR This Redis command is not allowed*")),
      Eval("return redis.call('watch', 'k')", Err("ERR This Redis command is not allowed*")),
      Eval("return redis.call('client', 'list')", Err("ERR This Redis command is not allowed*")),
      Eval("return redis.call('config', 'get', 'x')", Err("ERR This Redis command is not*")),
      Eval("return redis.call('ping')", Simple("PONG")),
      Eval("error('boom')", Any()),
      Eval("error({err='MY boom'})", Any()),
      Eval("local t = nil; return t.x", Any()),
      Eval("return 'a", Err("ERR Error compiling script (new function): user_script:1:*")),
      Eval("return select(2, pcall(redis.call, 'nosuch'))",
           Bulk("ERR Unknown Redis command called from script")),
      Eval("return redis.call('incr', 'n', 'x')", Any()),
      {{"SET", "s", "a"}, Ok()},
      Eval("return redis.call('incr', 's')", Any()),
      Eval("return redis.call('select', 100)", Any()),
      Eval("return redis.call('select', 'x')", Any()),
      {{"EVAL", "return 1", "x"}, Error("ERR value is not an integer or out of range")},
      {{"EVAL", "return 1", "-1"}, Error("ERR Number of keys can't be negative")},
      {{"EVAL", "return 1", "2", "a"},
       Error("ERR Number of keys can't be greater than number of args")},
      {{"EVAL", "return 1"}, Err("ERR wrong number of arguments*")},
      {{"EVALSHA", "nope", "0"}, Error("NOSCRIPT No matching script. Please use EVAL.")},
      {{"EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"},
       Error("NOSCRIPT No matching script. Please use EVAL.")},
      Eval("return redis.sha1hex()", Any()),
      Eval("redis.log(1)", Any()),
      Eval("redis.log('x', 'y')", Any()),
      Eval("redis.log(9, 'y')", Any()),
      Eval("redis.setresp(4)", Any()),
      Eval("redis.set_repl(99)", Any()),
      Eval("return redis.error_reply(1)", Any()),
  });
}

// The caller's ACL rules hold for the commands its script calls.
TEST_F(ScriptingTest, AclRulesApplyInsideScripts) {
  RunTable({
      {{"ACL", "SETUSER", "scripter", "on", ">pw", "+eval", "+get", "+set", "+publish", "~k*",
        "&chan"},
       Ok()},
      {{"AUTH", "scripter", "pw"}, Ok()},
      Eval("return redis.call('set', 'k1', 'v')", Ok()),
      Eval("return redis.call('get', 'k1')", Bulk("v")),
      Eval("return redis.call('del', 'k1')", Any()),
      Eval("return redis.call('get', 'other')", Any()),
      Eval("return redis.pcall('get', 'other')", Any()),
      Eval("return redis.call('publish', 'chan', 'x')", Int(0)),
      Eval("return redis.call('publish', 'elsewhere', 'x')", Any()),
      {{"AUTH", "default", "x"}, Ok()},
      {{"ACL", "DELUSER", "scripter"}, Int(1)},
  });
}

TEST_F(ScriptingTest, Sandbox) {
  RunTable({
      Eval("x = 5", Any()),
      Eval("return y", Any()),
      Eval("redis.call = nil", Any()),
      Eval("string.upper = nil", Any()),
      Eval("_G.z = 1", Any()),
      Eval("rawset(_G, 'x', 1) return x", Any()),
      Eval("return os", Any()),
      Eval("return io", Any()),
      Eval("return loadfile", Any()),
      Eval("return dofile", Any()),
      Eval("return print", Any()),
      Eval("return debug", Any()),
      Eval("return getfenv", Any()),
      Eval("return setfenv", Any()),
      Eval("return newproxy", Any()),
      Eval("return type(xpcall) .. type(select) .. type(unpack) .. type(gcinfo)", Any()),
      Eval("local t = {} t.x = 1 rawset(t, 'y', 2) return t.x + t.y", Int(3)),
      Eval("local n = 0 for k, v in pairs(string) do n = n + 1 end return n", Int(15)),
      Eval("local n = 0 for k, v in pairs(math) do n = n + 1 end return n", Any()),
      Eval("return type(pairs(_G))", Bulk("function")),
      Eval("return loadstring('return 1 + 1')()", Int(2)),
      Eval("return tostring(string.format('%d', 42))", Bulk("42")),
      Eval("return redis.REDIS_VERSION", Any()),
      Eval("return redis.LOG_WARNING", Int(3)),
      Eval("redis.log(redis.LOG_DEBUG, 'from a script') return 1", Int(1)),
      Eval("return redis.breakpoint()", Nil()),
      Eval("return redis.replicate_commands()", Int(1)),
      Eval("redis.set_repl(redis.REPL_ALL) return 1", Int(1)),
      Eval("math.randomseed(7) return tostring(math.random())", Any()),
      Eval("math.randomseed(7) return math.random(10, 20)", Any()),
      Eval("return math.random(0)", Any()),
  });
}

TEST_F(ScriptingTest, Libraries) {
  RunTable({
      Eval("return cjson.encode({1, 2, {a = 1}})", Bulk("[1,2,{\"a\":1}]")),
      Eval("return cjson.decode('[1,2,3]')", Arr({Int(1), Int(2), Int(3)})),
      Eval("return cjson.decode('{\"a\":[1,{\"b\":true}]}').a[2].b", Int(1)),
      Eval("return cjson.encode(cjson.decode('{\"x\":null}'))", Any()),
      Eval("return cjson.decode('[')", Any()),
      Eval("return bit.band(7, 3)", Int(3)),
      Eval("return bit.bxor(5, 3)", Int(6)),
      Eval("return bit.tohex(255)", Bulk("000000ff")),
      Eval("return bit.lshift(1, 40)", Any()),
      Eval("return struct.pack('>I2', 258)", Bulk(std::string("\x01\x02", 2))),
      Eval("return struct.pack('<i4', -2)", Any()),
      Eval("return {struct.unpack('>I2', '\\1\\2')}", Arr({Int(258), Int(3)})),
      Eval("return {struct.unpack('<i4', struct.pack('<i4', -2))}", Any()),
      Eval("return struct.pack('bBhHlLc3s', -1, 255, -2, 65535, -3, 7, 'abc', 'zz')", Any()),
      Eval("return {struct.unpack('bBhHlLc3s', struct.pack('bBhHlLc3s', -1, 255, -2, 65535, -3, "
           "7, 'abc', 'zz'))}",
           Any()),
      Eval("return struct.size('>iIhd')", Any()),
      Eval("return struct.pack('>d', 1.5)", Any()),
      Eval("return struct.unpack('>I2', '\\1')", Any()),
      Eval("return cmsgpack.pack({1, 2, 3})", Any()),
      Eval("return cmsgpack.pack({a = 1})", Any()),
      Eval("return cmsgpack.pack('hello', 300, -5, -200, 70000, 1.5, true, false)", Any()),
      Eval("return cmsgpack.pack(string.rep('x', 40))", Any()),
      Eval("return cmsgpack.pack(4294967296, -4294967296, 0.1)", Any()),
      Eval("return {cmsgpack.unpack(cmsgpack.pack({1, 2, 'x'}, 7))}", Any()),
      Eval("return cmsgpack.unpack(cmsgpack.pack({a = {b = 'c'}})).a.b", Bulk("c")),
      Eval("return cmsgpack.unpack('\\196')", Any()),
      Eval("return redis.sha1hex('')", Bulk("da39a3ee5e6b4b0d3255bfef95601890afd80709")),
      Eval("return redis.sha1hex('abc')", Bulk("a9993e364706816aba3e25717850c26c9cd0d89d")),
  });
}

TEST_F(ScriptingTest, ScriptCacheAndFlags) {
  const std::string sha = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db";  // "return 1"
  RunTable({
      {{"SCRIPT", "LOAD", "return 1"}, Bulk(sha)},
      {{"EVALSHA", sha, "0"}, Int(1)},
      {{"EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"}, Int(1)},
      {{"EVALSHA_RO", sha, "0"}, Int(1)},
      {{"SCRIPT", "EXISTS", sha, "abc"}, Arr({Int(1), Int(0)})},
      {{"SCRIPT", "EXISTS", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB"}, Arr({Int(1)})},
      {{"SCRIPT", "LOAD", "return 'a"}, Err("ERR Error compiling script*")},
      {{"SCRIPT", "FLUSH", "ASYNC"}, Ok()},
      {{"SCRIPT", "EXISTS", sha}, Arr({Int(0)})},
      {{"SCRIPT", "FLUSH", "bad"}, Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option")},
      {{"SCRIPT", "FLUSH", "SYNC"}, Ok()},
      {{"SCRIPT", "KILL"}, Error("NOTBUSY No scripts in execution right now.")},
      {{"SCRIPT", "NOPE"}, Any()},
      {{"SCRIPT", "HELP"}, Any(), Diff::kSkip, "SCRIPT HELP adds a HELP line to Redis's"},
      Eval("#!lua flags=no-writes\nreturn redis.call('set', 'a', 'b')",
           Err("ERR Write commands are not allowed from read-only scripts.*")),
      Eval("#!lua flags=no-writes,allow-oom\nreturn redis.call('get', 'a')", Nil()),
      Eval("#!lua flags=bogus\nreturn 1", Error("ERR Unexpected flag in script shebang: bogus")),
      Eval("#!lua flags=no-writes,\nreturn 1", Any()),
      Eval("#!luax\nreturn 1", Error("ERR Unexpected engine in script shebang: #!luax")),
      Eval("#!lua foo=bar\nreturn 1", Error("ERR Unknown lua shebang option: foo=bar")),
      Eval("#!lua", Error("ERR Invalid script shebang")),
      Eval("#!lua\nreturn redis.call('set', 'a', 'b')", Ok()),
      Eval("#!lua\nerror('x')", Any()),
      {{"EVAL_RO", "return redis.call('set', 'a', 'b')", "0"},
       Err("ERR Write commands are not allowed from read-only scripts.*")},
      {{"EVAL_RO", "#!lua\nreturn 1", "0"},
       Error("ERR Can not execute a script with write flag using *_ro command.")},
      {{"EVAL_RO", "#!lua flags=no-writes\nreturn redis.call('get', 'a')", "0"}, Bulk("b")},
      {{"EVAL_RO", "return redis.call('get', KEYS[1])", "1", "a"}, Bulk("b")},
  });
}

const char kLib[] =
    "#!lua name=mylib\n"
    "redis.register_function('setk', function(keys, args) return redis.call('set', keys[1], "
    "args[1]) end)\n"
    "redis.register_function{function_name='count', callback=function(keys, args) return "
    "#keys end, flags={'no-writes'}, description='counts keys'}\n";

TEST_F(ScriptingTest, FunctionsLoadCallList) {
  RunTable({
      {{"FUNCTION", "LOAD", kLib}, Bulk("mylib")},
      {{"FCALL", "setk", "1", "k", "v"}, Ok()},
      {{"GET", "k"}, Bulk("v")},
      {{"FCALL", "count", "2", "a", "b"}, Int(2)},
      {{"FCALL_RO", "count", "0"}, Int(0)},
      {{"FCALL_RO", "setk", "1", "k", "v"},
       Error("ERR Can not execute a script with write flag using *_ro command.")},
      {{"FCALL", "nosuch", "0"}, Error("ERR Function not found")},
      {{"FCALL", "setk", "x"}, Error("ERR Bad number of keys provided")},
      {{"FCALL", "setk", "5", "a"},
       Error("ERR Number of keys can't be greater than number of args")},
      {{"FCALL", "setk", "-1"}, Error("ERR Number of keys can't be negative")},
      {{"FUNCTION", "LOAD", kLib}, Error("ERR Library 'mylib' already exists")},
      {{"FUNCTION", "LOAD", "REPLACE", kLib}, Bulk("mylib")},
      {{"FUNCTION", "LOAD", "BAD", kLib}, Error("ERR Unknown option given: BAD")},
      {{"FUNCTION", "LIST", "LIBRARYNAME", "nomatch*"}, Arr({})},
      {{"FUNCTION", "LIST", "LIBRARYNAME"}, Error("ERR library name argument was not given")},
      {{"FUNCTION", "LIST", "BAD"}, Error("ERR Unknown argument BAD")},
      {{"FUNCTION", "LIST", "WITHCODE"}, Any(), Diff::kUnordered},
      {{"FUNCTION", "LIST"}, Any(), Diff::kUnordered},
      {{"FUNCTION", "STATS"}, Any()},
      {{"FUNCTION", "KILL"}, Error("NOTBUSY No scripts in execution right now.")},
      {{"FUNCTION", "DELETE", "nosuch"}, Error("ERR Library not found")},
      {{"FUNCTION", "DELETE", "mylib"}, Ok()},
      {{"FCALL", "setk", "1", "k", "v"}, Error("ERR Function not found")},
      {{"FUNCTION", "FLUSH", "bad"}, Error("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")},
      {{"FUNCTION", "FLUSH", "ASYNC"}, Ok()},
      {{"FUNCTION", "FLUSH", "a", "b"}, Any()},
      {{"function", "restore", "a", "b", "c"}, Any()},
  });
  RunTable({{{"FUNCTION", "LOAD", kLib}, Bulk("mylib")},
            {{"FUNCTION", "LIST"}, Any(), Diff::kUnordered},
            {{"FUNCTION", "STATS"}, Any()}},
           3);
}

TEST_F(ScriptingTest, FunctionLoadErrors) {
  auto load = [](std::string code, Expect e) { return Row{{"FUNCTION", "LOAD", code}, e}; };
  RunTable({
      load("return 1", Error("ERR Missing library metadata")),
      load("#!lua name=x", Error("ERR Invalid library metadata")),
      load("#!lua\nreturn 1", Error("ERR Library name was not given")),
      load("#!lua name=x name=y\n", Any()),
      load("#!lua name=x foo=bar\n", Error("ERR Invalid metadata value given: foo=bar")),
      load("#!lua name=bad-name\n", Any()),
      load("#!nope name=x\nreturn 1", Error("ERR Engine 'nope' not found")),
      load("#!lua name=x\nreturn 1", Error("ERR No functions registered")),
      load("#!lua name=x\nreturn 'a", Any()),
      load("#!lua name=x\nstring.format('a')", Any()),
      load("#!lua name=x\nredis.call('ping')", Any()),
      load("#!lua name=x\nredis.register_function('bad-name', function() end)", Any()),
      load("#!lua name=x\nredis.register_function('f', function() end)\n"
           "redis.register_function('f', function() end)",
           Any()),
      load("#!lua name=x\nredis.register_function('f')", Any()),
      load("#!lua name=x\nredis.register_function(1, 2, 3)", Any()),
      load("#!lua name=x\nredis.register_function{function_name='f'}", Any()),
      load("#!lua name=x\nredis.register_function{callback=function() end}", Any()),
      load("#!lua name=x\nredis.register_function{function_name='f', callback=function() end, "
           "flags={'nope'}}",
           Any()),
      load("#!lua name=x\nredis.register_function{function_name='f', callback=function() end, "
           "bogus=1}",
           Any()),
      load("#!lua name=x\nredis.register_function{function_name='f', callback=function() end, "
           "flags='no-writes'}",
           Any()),
      load("#!lua name=x\nredis.register_function{function_name='f', callback=1}", Any()),
      load("#!lua name=x\nredis.register_function('f', 'notfn')", Any()),
      load("#!lua name=x\nlocal a = 1\nredis.register_function('f', function() return a end)",
           Bulk("x")),
      {{"FCALL", "f", "0"}, Int(1)},
      load("#!lua name=y\nredis.register_function('f', function() end)",
           Error("ERR Function f already exists")),
      load("#!lua name=z\nredis.register_function('g', function() x = 1 end)\n"
           "redis.register_function('h', function() return redis.call('nosuch') end)\n"
           "redis.register_function('i', function(k, a) return {k[1], a[1]} end)",
           Bulk("z")),
      {{"FCALL", "g", "0"}, Any()},
      {{"FCALL", "h", "0"}, Any()},
      {{"FCALL", "i", "1", "k", "a"}, BulkArr({"k", "a"})},
  });
}

TEST_F(ScriptingTest, FunctionDumpRestoreBetweenServers) {
  RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
  // A library long enough for Redis to LZF-compress it in its payload.
  std::string big = "#!lua name=big\n";
  for (int i = 0; i < 40; ++i)
    big += "redis.register_function('g" + std::to_string(i) + "', function() return " +
           std::to_string(i) + " end)\n";
  ASSERT_EQ(r("FUNCTION", "LOAD", kLib).str, "mylib");
  ASSERT_EQ(r("FUNCTION", "LOAD", big).str, "big");
  const Reply from_redis = r("FUNCTION", "DUMP");
  ASSERT_EQ(from_redis.type, Reply::Type::kBulk);
  EXPECT_EQ(v("FUNCTION", "RESTORE", from_redis.str).str, "OK");
  EXPECT_EQ(v("FCALL", "g7", "0").integer, 7);
  const Reply again = v("FUNCTION", "RESTORE", from_redis.str);
  EXPECT_TRUE(again.str == "ERR Library mylib already exists" ||
              again.str == "ERR Library big already exists")
      << again.str;
  EXPECT_EQ(v("FUNCTION", "RESTORE", from_redis.str, "REPLACE").str, "OK");
  EXPECT_EQ(v("FUNCTION", "RESTORE", from_redis.str, "BAD").str,
            "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
  EXPECT_EQ(v("FUNCTION", "RESTORE", "garbage").str,
            "ERR DUMP payload version or checksum are wrong");
  std::string corrupt = from_redis.str;
  corrupt[3] ^= 1;
  EXPECT_EQ(v("FUNCTION", "RESTORE", corrupt).str,
            "ERR DUMP payload version or checksum are wrong");
  // Back the other way: vessel's payload restores in Redis.
  const Reply from_vessel = v("FUNCTION", "DUMP");
  r("FUNCTION", "FLUSH");
  EXPECT_EQ(r("FUNCTION", "RESTORE", from_vessel.str).str, "OK");
  EXPECT_EQ(r("FCALL", "g39", "0").integer, 39);
  EXPECT_EQ(r("FCALL", "count", "1", "x").integer, 1);
  // FLUSH policy replaces everything.
  v("FUNCTION", "FLUSH");
  v("FUNCTION", "LOAD", "#!lua name=other\nredis.register_function('o', function() return 1 end)");
  EXPECT_EQ(v("FUNCTION", "RESTORE", from_redis.str, "FLUSH").str, "OK");
  EXPECT_EQ(v("FCALL", "o", "0").str, "ERR Function not found");
  // An empty set dumps to a payload both accept.
  v("FUNCTION", "FLUSH");
  r("FUNCTION", "FLUSH");
  EXPECT_EQ(v("FUNCTION", "DUMP").str, r("FUNCTION", "DUMP").str);
}

TEST_F(ScriptingTest, CommandInfoMatchesRedis) {
  for (const char* cmd : {"eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"}) {
    RespClient v = Servers::Get().Vessel(), r = Servers::Get().Redis();
    const Reply a = v("COMMAND", "GETKEYS", cmd, "x", "2", "k1", "k2", "arg");
    const Reply b = r("COMMAND", "GETKEYS", cmd, "x", "2", "k1", "k2", "arg");
    EXPECT_EQ(a, b) << cmd << "\n  vessel: " << a.ToString() << "\n  redis: " << b.ToString();
  }
}

}  // namespace
}  // namespace vessel::test
