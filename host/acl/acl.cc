// The table of users, the ACL log and the ACL file (Redis 7.0's acl.c semantics), and the
// engine's AccessControl on top of them.
#include "host/acl/acl.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "host/acl/crypto.h"
#include "host/engine/builtins.h"
#include "spdlog/spdlog.h"

namespace vessel::acl {
namespace {

using engine::Cat;

bool HasSpaces(std::string_view s) {
  for (char c : s)
    if (std::isspace(static_cast<unsigned char>(c)) || c == '\0') return true;
  return false;
}

std::string_view Trim(std::string_view s, std::string_view chars) {
  const size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(chars);
  return s.substr(b, e - b + 1);
}

// sdssplitlen: every separator splits, so two spaces make an empty element.
std::vector<std::string> SplitOn(std::string_view s, char sep) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

std::string_view PeerIp(std::string_view peer) {
  if (!peer.empty() && peer[0] == '[') {
    const size_t end = peer.find(']');
    return peer.substr(1, end == std::string_view::npos ? std::string_view::npos : end - 1);
  }
  const size_t colon = peer.rfind(':');
  return colon == std::string_view::npos ? peer : peer.substr(0, colon);
}

}  // namespace

Acl::Acl(engine::Engine* engine)
    : engine_(engine),
      catalog_(engine->registry()),
      p_acllog_max_len_(engine::ParamValues::Find("acllog-max-len")),
      p_pubsub_default_(engine::ParamValues::Find("acl-pubsub-default")),
      p_protected_mode_(engine::ParamValues::Find("protected-mode")) {
  InitCrypto();
  aclfile_ = engine->settings().params.Text(engine::ParamValues::Find("aclfile"));
  auto def = NewDefaultUser();
  const std::string requirepass =
      engine->settings().params.Text(engine::ParamValues::Find("requirepass"));
  if (!requirepass.empty()) {
    def->Apply("resetpass", catalog_, false);
    def->Apply(Cat(">", requirepass), catalog_, false);
    def->Seal();
  }
  std::lock_guard l(mu_);
  default_ = def;
  users_["default"] = def;
  PublishLocked();
}

bool Acl::PubsubAllChannels() const { return engine_->ParamInt(p_pubsub_default_) == 0; }

std::shared_ptr<User> Acl::NewDefaultUser() {
  auto u = std::make_shared<User>("default", next_incarnation_++, PubsubAllChannels());
  for (const char* op : {"+@all", "~*", "&*", "on", "nopass"}) u->Apply(op, catalog_, false);
  u->Seal();
  return u;
}

void Acl::PublishLocked() { Publish(default_->open()); }

std::string Acl::ApplyAll(User* u, const std::vector<std::string>& rules) const {
  for (const std::string& r : rules) {
    const RuleError e = u->Apply(r, catalog_, PubsubAllChannels());
    if (e != RuleError::kOk)
      return Cat("Error loading ACL rule '", r, "' for the user named '", u->name(),
                 "': ", RuleErrorText(e));
  }
  u->Seal();
  return "";
}

bool Acl::LoadAtStartup(std::string* error) {
  const auto& configured = engine_->config().users;
  if (!aclfile_.empty() && !configured.empty()) {
    *error =
        "Configuring Redis with users defined in redis.conf and at the same setting an ACL file "
        "path is invalid. This setup is very likely to lead to configuration errors and "
        "security holes, please define either an ACL file or declare users directly in your "
        "redis.conf, but not both.";
    return false;
  }
  std::map<std::string, std::shared_ptr<User>> loaded;
  for (const config::UserConfig& c : configured) {
    if (HasSpaces(c.name)) {
      *error = "Spaces not allowed in ACL usernames";
      return false;
    }
    if (loaded.contains(c.name)) {
      *error = Cat("user '", c.name,
                   "': Duplicate user found. A user can only be defined once in config files");
      return false;
    }
    std::vector<std::string> words, rules;
    size_t bad = 0;
    if (!SplitArgs(c.rules, &words)) {
      *error = Cat("Unbalanced quotes in the rules of the user named '", c.name, "'");
      return false;
    }
    if (!MergeSelectorArgs(words, &rules, &bad)) {
      *error = Cat("Unmatched parenthesis in acl selector starting at '", words[bad], "'.");
      return false;
    }
    std::shared_ptr<User> u;
    if (c.name == "default") {
      u = std::make_shared<User>(*default_);
      u->Apply("reset", catalog_, PubsubAllChannels());
    } else {
      u = std::make_shared<User>(c.name, next_incarnation_++, PubsubAllChannels());
    }
    if (std::string e = ApplyAll(u.get(), rules); !e.empty()) {
      *error = std::move(e);
      return false;
    }
    if (!u->enabled()) spdlog::info("acl user is disabled (no 'on' in its rules) user={}", c.name);
    loaded[c.name] = std::move(u);
  }
  {
    std::lock_guard l(mu_);
    for (auto& [name, u] : loaded) {
      users_[name] = u;
      if (name == "default") default_ = u;
    }
    PublishLocked();
  }
  if (!aclfile_.empty()) {
    if (std::string e = LoadFile(nullptr); !e.empty()) {
      *error = Cat("Aborting Redis startup because of ACL errors: ", e);
      return false;
    }
  }
  return true;
}

void Acl::SetDefaultPassword(std::string_view password) {
  std::lock_guard l(mu_);
  auto u = std::make_shared<User>(*default_);
  u->Apply("resetpass", catalog_, false);
  u->Apply(password.empty() ? std::string("nopass") : Cat(">", password), catalog_, false);
  u->Seal();
  default_ = u;
  users_["default"] = u;
  PublishLocked();
}

std::string Acl::SetUser(std::string_view name, const std::vector<std::string>& args) {
  if (HasSpaces(name)) return "Usernames can't contain spaces or null characters";
  std::vector<std::string> rules;
  size_t bad = 0;
  if (!MergeSelectorArgs(args, &rules, &bad))
    return Cat("Unmatched parenthesis in acl selector starting at '", args[bad], "'.");
  std::lock_guard l(mu_);
  auto it = users_.find(name);
  auto u = it != users_.end() ? std::make_shared<User>(*it->second)
                              : std::make_shared<User>(std::string(name), 0, PubsubAllChannels());
  for (const std::string& r : rules) {
    const RuleError e = u->Apply(r, catalog_, PubsubAllChannels());
    if (e != RuleError::kOk)
      return Cat("Error in ACL SETUSER modifier '", r, "': ", RuleErrorText(e));
  }
  if (it == users_.end()) u->set_incarnation(next_incarnation_++);
  u->Seal();
  users_[std::string(name)] = u;
  if (name == "default") default_ = u;
  PublishLocked();
  return "";
}

int Acl::DelUsers(const std::vector<std::string>& names, engine::Session* self) {
  std::vector<std::shared_ptr<const User>> deleted;
  {
    std::lock_guard l(mu_);
    for (const std::string& n : names) {
      auto it = users_.find(n);
      if (it == users_.end() || n == "default") continue;
      deleted.push_back(it->second);
      users_.erase(it);
    }
    PublishLocked();
  }
  KillClientsOf(deleted, self);
  return static_cast<int>(deleted.size());
}

void Acl::KillClientsOf(const std::vector<std::shared_ptr<const User>>& users,
                        engine::Session* self) {
  if (users.empty()) return;
  std::vector<std::pair<uint64_t, int>> victims;
  engine_->ForEachSession([&](engine::Session* s) {
    std::lock_guard l(s->info().mu);
    for (const auto& u : users) {
      if (s->info().user != u->name() || s->info().user_incarnation != u->incarnation()) continue;
      if (s == self) {
        self->CloseAfterReply();
      } else {
        victims.emplace_back(s->id(), s->worker());
      }
    }
  });
  for (auto& [id, worker] : victims) engine_->KillSession(id, worker);
}

void Acl::KillRevokedSubscribers(std::string_view name, engine::Session* self) {
  std::shared_ptr<const User> u = Find(name);
  engine::Messaging* m = engine_->messaging();
  if (u == nullptr || m == nullptr || u->unrestricted()) return;
  auto revoked = [u, m](engine::Session* s) {
    bool denied = false;
    m->ForEachSubscription(s, [&](std::string_view channel, bool is_pattern) {
      denied = denied || !CheckChannel(*u, channel, is_pattern);
    });
    return denied;
  };
  std::vector<std::pair<uint64_t, int>> subscribers;
  engine_->ForEachSession([&](engine::Session* s) {
    if (!s->info().messaging.in_pubsub()) return;
    std::lock_guard l(s->info().mu);
    if (s->info().user != u->name() || s->info().user_incarnation != u->incarnation()) return;
    if (s == self) {
      if (revoked(s)) self->CloseAfterReply();  // self runs on this thread
    } else {
      subscribers.emplace_back(s->id(), s->worker());
    }
  });
  for (auto& [id, worker] : subscribers) {
    engine_->WithSession(id, worker, [revoked, e = engine_](engine::Session* s) {
      if (revoked(s)) e->KillSession(s->id(), s->worker());
    });
  }
}

std::shared_ptr<const User> Acl::Find(std::string_view name) const {
  std::lock_guard l(mu_);
  auto it = users_.find(name);
  return it == users_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const User>> Acl::Users() const {
  std::lock_guard l(mu_);
  std::vector<std::shared_ptr<const User>> out;
  for (auto& [name, u] : users_) out.push_back(u);
  return out;
}

// ---- the ACL file ----

std::string Acl::ParseFile(const std::string& text,
                           std::map<std::string, std::shared_ptr<User>>* out) {
  std::string errors;
  const std::vector<std::string> lines = SplitOn(text, '\n');
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t linenum = i + 1;
    const std::string_view line = Trim(lines[i], " \t\r\n");
    if (line.empty()) continue;
    const std::vector<std::string> argv = SplitOn(line, ' ');
    if (argv.empty()) continue;
    if (argv[0] != "user" || argv.size() < 2) {
      errors +=
          Cat(aclfile_, ":", linenum, " should start with user keyword followed by the username. ");
      continue;
    }
    if (HasSpaces(argv[1])) {
      errors += Cat("'", aclfile_, ":", linenum, ": username '", argv[1],
                    "' contains invalid characters. ");
      continue;
    }
    if (out->contains(argv[1])) {
      errors += Cat("WARNING: Duplicate user '", argv[1], "' found on line ", linenum, ". ");
      continue;
    }
    auto u = std::make_shared<User>(argv[1], next_incarnation_++, PubsubAllChannels());
    (*out)[argv[1]] = u;
    std::vector<std::string> args(argv.begin() + 2, argv.end()), rules;
    size_t bad = 0;
    if (!MergeSelectorArgs(args, &rules, &bad)) {
      errors += Cat(aclfile_, ":", linenum, ": Unmatched parenthesis in selector definition.");
      continue;
    }
    bool syntax_error = false;
    for (const std::string& r : rules) {
      const std::string_view op = Trim(r, "\t\r\n");
      const RuleError e = u->Apply(op, catalog_, PubsubAllChannels());
      if (e == RuleError::kUnknown) {
        errors += Cat(aclfile_, ":", linenum, ": Error in applying operation '", op,
                      "': ", RuleErrorText(e), ". ");
      } else if (e != RuleError::kOk && !syntax_error) {
        errors += Cat(aclfile_, ":", linenum, ": ", RuleErrorText(e), ". ");
        syntax_error = true;
      }
    }
    u->Seal();
  }
  return errors;
}

std::string Acl::LoadFile(engine::Session* self) {
  std::ifstream in(aclfile_, std::ios::binary);
  if (!in) {
    return Cat("Error loading ACLs, opening file '", aclfile_, "': ", std::strerror(errno));
  }
  std::stringstream buf;
  buf << in.rdbuf();
  std::map<std::string, std::shared_ptr<User>> loaded;
  std::vector<std::shared_ptr<const User>> old;
  {
    std::lock_guard l(mu_);
    std::string errors = ParseFile(buf.str(), &loaded);
    if (!errors.empty())
      return errors +
             "WARNING: ACL errors detected, no change to the previously active ACL rules was "
             "performed";
    // The default user keeps its identity (its clients stay); every other user is new.
    std::shared_ptr<User> def;
    if (auto it = loaded.find("default"); it != loaded.end()) {
      def = it->second;
    } else {
      def = NewDefaultUser();
    }
    def->set_incarnation(default_->incarnation());
    def->Seal();
    for (auto& [name, u] : users_)
      if (name != "default") old.push_back(u);
    users_.clear();
    for (auto& [name, u] : loaded) users_[name] = u;
    users_["default"] = def;
    default_ = def;
    PublishLocked();
  }
  KillClientsOf(old, self);
  return "";
}

std::string Acl::SaveFile() {
  std::string text;
  for (const auto& u : Users())
    text += Cat("user ", u->name(), " ", DescribeUser(*u, catalog_), "\n");
  const std::string tmp = Cat(aclfile_, ".tmp-", getpid(), "-", engine_->Now());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  bool ok = f != nullptr && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (f != nullptr) ok = std::fclose(f) == 0 && ok;
  if (!ok || std::rename(tmp.c_str(), aclfile_.c_str()) != 0) {
    spdlog::warn("acl save failed file={} error={}", aclfile_, std::strerror(errno));
    std::remove(tmp.c_str());
    return "There was an error trying to save the ACLs. Please check the server logs for more "
           "information";
  }
  return "";
}

// ---- the ACL log ----

void Acl::AddLog(engine::Session& s, Verdict reason, bool multi, std::string object,
                 std::string username) {
  LogEntry e;
  e.reason = reason;
  e.multi = multi;
  e.object = std::move(object);
  e.username = std::move(username);
  e.ctime_ms = engine_->Now();
  e.client_info = engine::ClientInfoLine(&s, e.ctime_ms);
  std::lock_guard l(mu_);
  int toscan = 10;
  for (auto it = log_.begin(); toscan-- > 0 && it != log_.end(); ++it) {
    const int64_t delta =
        it->ctime_ms > e.ctime_ms ? it->ctime_ms - e.ctime_ms : e.ctime_ms - it->ctime_ms;
    if (it->reason != e.reason || it->multi != e.multi || delta > 60000 || it->object != e.object ||
        it->username != e.username)
      continue;
    LogEntry match = std::move(*it);
    log_.erase(it);
    match.client_info = std::move(e.client_info);
    match.ctime_ms = e.ctime_ms;
    ++match.count;
    log_.push_front(std::move(match));
    return;
  }
  log_.push_front(std::move(e));
  const size_t max = static_cast<size_t>(engine_->ParamInt(p_acllog_max_len_));
  while (log_.size() > max) log_.pop_back();
}

std::vector<LogEntry> Acl::Log(size_t count) const {
  std::lock_guard l(mu_);
  count = std::min(count, log_.size());
  return std::vector<LogEntry>(log_.begin(), log_.begin() + static_cast<ptrdiff_t>(count));
}

void Acl::ResetLog() {
  std::lock_guard l(mu_);
  log_.clear();
}

// ---- engine::AccessControl ----

std::shared_ptr<const engine::AccessUser> Acl::DefaultUser() {
  std::lock_guard l(mu_);
  return default_;
}

std::shared_ptr<const engine::AccessUser> Acl::Current(const engine::AccessUser& user) {
  std::lock_guard l(mu_);
  auto it = users_.find(user.name());
  if (it == users_.end() || it->second->incarnation() != user.incarnation()) return nullptr;
  return it->second;
}

bool Acl::HasUser(std::string_view name) { return Find(name) != nullptr; }

std::shared_ptr<const engine::AccessUser> Acl::Authenticate(engine::Session& s,
                                                            std::string_view name,
                                                            std::string_view password,
                                                            std::string_view cmd_name) {
  std::shared_ptr<const User> u = Find(name);
  bool ok = false;
  if (u != nullptr && u->enabled()) {
    if (u->nopass()) {
      ok = true;
    } else {
      // Every stored hash is compared, in constant time, whichever matches.
      const std::string hash = Sha256Hex(password);
      for (const std::string& p : u->passwords()) ok |= ConstantTimeEqual(hash, p);
    }
  }
  if (ok) return u;
  AddLog(s, Verdict::kAuth, s.in_multi(), std::string(cmd_name), std::string(name));
  return nullptr;
}

std::string Acl::Check(engine::Session& s, const engine::AccessUser& user,
                       const engine::CommandSpec& cmd, const std::string_view* argv, int argc,
                       bool in_exec) {
  const User& u = static_cast<const User&>(user);
  int pos = 0;
  const Verdict v = CheckCommand(u, cmd, argv, argc, &pos);
  if (v == Verdict::kOk) return "";
  AddLog(s, v, in_exec || s.in_multi(), v == Verdict::kCommand ? cmd.name : std::string(argv[pos]),
         u.name());
  if (in_exec) {
    const char* reason = v == Verdict::kCommand
                             ? "no permission to execute the command or subcommand"
                         : v == Verdict::kKey ? "no permission to touch the specified keys"
                                              : "no permission to access one of the channels used "
                                                "as arguments";
    return Cat(
        "NOPERM ACLs rules changed between the moment the transaction was accumulated and the "
        "EXEC call. This command is no longer allowed for the following reason: ",
        reason);
  }
  if (v == Verdict::kCommand)
    return Cat("NOPERM this user has no permissions to run the '", cmd.name, "' command");
  if (v == Verdict::kKey)
    return "NOPERM this user has no permissions to access one of the keys used as arguments";
  return "NOPERM this user has no permissions to access one of the channels used as arguments";
}

bool Acl::UnrestrictedKeyAccess(const engine::AccessUser& user, const engine::CommandSpec& cmd,
                                const std::string_view* argv, int argc, uint32_t keyspec_flags) {
  return CheckUnrestrictedKeyAccess(static_cast<const User&>(user), cmd, argv, argc, keyspec_flags);
}

bool Acl::RefusesPeer(std::string_view peer) {
  if (engine_->ParamInt(p_protected_mode_) == 0) return false;
  if (!DefaultUser()->nopass()) return false;
  const std::string_view ip = PeerIp(peer);
  return ip != "127.0.0.1" && ip != "::1";
}

bool SessionMayUseChannel(const engine::Session& s, std::string_view channel, bool is_pattern) {
  const engine::AccessUser* u = s.user();
  if (u == nullptr || u->unrestricted()) return true;
  return CheckChannel(static_cast<const User&>(*u), channel, is_pattern);
}

std::unique_ptr<Acl> InstallAcl(engine::Engine* engine, std::string* error) {
  RegisterAclCommands(engine->registry());
  auto acl = std::make_unique<Acl>(engine);
  if (!acl->LoadAtStartup(error)) return nullptr;
  engine->set_access(acl.get());
  const int requirepass = engine::ParamValues::Find("requirepass");
  Acl* raw = acl.get();
  engine->OnParamSet("requirepass",
                     std::make_shared<engine::Engine::ParamApply>([raw, engine, requirepass] {
                       raw->SetDefaultPassword(engine->settings().params.Text(requirepass));
                       return std::string();
                     }));
  return acl;
}

}  // namespace vessel::acl
