// A user described back as rules, in Redis 7.0's canonical form (ACLDescribeUser): flags,
// password hashes, then per selector the keys, the channels and the command rules, found by
// Redis's best-fit search over the categories followed by single-command corrections.
#include <climits>
#include <vector>

#include "host/acl/user.h"

namespace vessel::acl {
namespace {

void Count(const std::vector<Catalog::Entry>& entries, const CommandBits& bits, uint64_t cat,
           unsigned long* on, unsigned long* off) {
  for (const auto& e : entries) {
    if (e.categories & cat) (bits.test(e.spec->id) ? *on : *off) += 1;
    if (!e.subs.empty()) Count(e.subs, bits, cat, on, off);
  }
}

// ACLChangeSelectorPerm on a bare bitmap.
void Change(CommandBits* bits, const Catalog::Entry& e, bool allow) {
  bits->set(e.spec->id, allow);
  for (const auto& s : e.subs) bits->set(s.spec->id, allow);
}

void SetCategory(CommandBits* bits, const std::vector<Catalog::Entry>& entries, uint64_t cat,
                 bool allow) {
  for (const auto& e : entries) {
    if (e.categories & cat) Change(bits, e, allow);
    if (!e.subs.empty()) SetCategory(bits, e.subs, cat, allow);
  }
}

void SingleCommands(const Selector& s, CommandBits* fake,
                    const std::vector<Catalog::Entry>& entries, std::string* rules) {
  for (const auto& e : entries) {
    const uint32_t id = e.spec->id;
    const bool userbit = s.commands.test(id);
    if (userbit != fake->test(id)) {
      *rules += userbit ? '+' : '-';
      *rules += e.spec->name;
      *rules += ' ';
      Change(fake, e, userbit);
    }
    if (!e.subs.empty()) SingleCommands(s, fake, e.subs, rules);
    if (!userbit) {
      auto it = s.firstargs.find(id);
      if (it == s.firstargs.end()) continue;
      for (const std::string& arg : it->second) {
        *rules += '+';
        *rules += e.spec->name;
        *rules += '|';
        *rules += arg;
        *rules += ' ';
      }
    }
  }
}

void AppendPattern(const KeyPattern& k, std::string* out) {
  if (k.perms == kKeyAll) {
    *out += '~';
  } else if (k.perms == kKeyRead) {
    *out += "%R~";
  } else {
    *out += "%W~";
  }
  *out += k.pattern;
}

}  // namespace

std::string DescribeCommandRules(const Selector& s, const Catalog& catalog) {
  std::string rules;
  const bool additive = !s.commands.test(kFutureBit);
  CommandBits fake;
  if (additive) {
    rules = "-@all ";
  } else {
    rules = "+@all ";
    fake.set();
  }
  CommandBits temp = s.commands;
  const int categories = static_cast<int>(catalog.categories().size());
  std::vector<bool> applied(catalog.categories().size());
  while (true) {
    int best = -1;
    unsigned long mindiff = INT_MAX, maxsame = 0;
    for (int j = 0; j < categories; ++j) {
      if (applied[j]) continue;
      unsigned long on = 0, off = 0;
      Count(catalog.top(), temp, uint64_t{1} << j, &on, &off);
      const unsigned long diff = additive ? off : on;
      const unsigned long same = additive ? on : off;
      if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
        best = j;
        mindiff = diff;
        maxsame = same;
      }
    }
    if (best == -1) break;
    const uint64_t cat = uint64_t{1} << best;
    SetCategory(&fake, catalog.top(), cat, additive);
    SetCategory(&temp, catalog.top(), cat, !additive);
    rules += additive ? "+@" : "-@";
    rules += catalog.categories()[best];
    rules += ' ';
    applied[best] = true;
  }
  SingleCommands(s, &fake, catalog.top(), &rules);
  rules.pop_back();  // the trailing space
  return rules;
}

std::string DescribeKeys(const Selector& s) {
  if (s.allkeys) return "~*";
  std::string out;
  for (const KeyPattern& k : s.keys) {
    if (!out.empty()) out += ' ';
    AppendPattern(k, &out);
  }
  return out;
}

std::string DescribeChannels(const Selector& s) {
  if (s.allchannels) return "&*";
  std::string out;
  for (const std::string& c : s.channels) {
    if (!out.empty()) out += ' ';
    out += '&';
    out += c;
  }
  return out;
}

std::string DescribeSelector(const Selector& s, const Catalog& catalog) {
  std::string out;
  if (s.allkeys) {
    out += "~* ";
  } else {
    for (const KeyPattern& k : s.keys) {
      AppendPattern(k, &out);
      out += ' ';
    }
  }
  if (s.allchannels) {
    out += "&* ";
  } else {
    out += "resetchannels ";
    for (const std::string& c : s.channels) {
      out += '&';
      out += c;
      out += ' ';
    }
  }
  out += DescribeCommandRules(s, catalog);
  return out;
}

std::string DescribeUser(const User& u, const Catalog& catalog) {
  std::string out;
  for (std::string_view f : u.FlagNames()) {
    out += f;
    out += ' ';
  }
  for (const std::string& p : u.passwords()) {
    out += '#';
    out += p;
    out += ' ';
  }
  for (const Selector& s : u.selectors()) {
    if (s.root) {
      out += DescribeSelector(s, catalog);
    } else {
      out += " (";
      out += DescribeSelector(s, catalog);
      out += ')';
    }
  }
  return out;
}

}  // namespace vessel::acl
