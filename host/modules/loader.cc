// Loading modules: resolve the path, read and check the manifest from the file before any module
// code runs, dlopen(RTLD_NOW | RTLD_LOCAL), call vsl_module_init with the API table.
#include "host/modules/loader.h"

#include <dlfcn.h>
#include <elf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "host/engine/abi_sizes.h"
#include "host/engine/memory.h"
#include "host/engine/strutil.h"
#include "spdlog/spdlog.h"

namespace vessel::modules {
namespace {

using engine::Cat;

template <typename T>
bool ReadAt(std::ifstream& f, uint64_t offset, T* out, size_t n = sizeof(T)) {
  f.seekg(static_cast<std::streamoff>(offset));
  f.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(n));
  return static_cast<size_t>(f.gcount()) == n;
}

bool FixedString(const char* s, size_t cap) { return std::memchr(s, '\0', cap) != nullptr; }

// "" when the manifest's struct_size is a released size, or a newer SDK's whose fields past this
// host's manifest are all zero (read from the section itself).
std::string SizeProblem(std::ifstream& f, const Elf64_Shdr& sh, const vsl_manifest& m) {
  if (m.struct_size > sizeof(m) && (m.struct_size > sh.sh_size || m.struct_size > 65536))
    return Cat("struct_size ", m.struct_size, " is larger than the section");
  std::string bytes(std::max<size_t>(m.struct_size, sizeof(m)), '\0');
  std::memcpy(bytes.data(), &m, sizeof(m));
  if (m.struct_size > sizeof(m) &&
      !ReadAt(f, sh.sh_offset + sizeof(m), bytes.data() + sizeof(m), m.struct_size - sizeof(m)))
    return Cat("struct_size ", m.struct_size, " is larger than the file");
  return engine::abi::CheckStructSize("vsl_manifest", engine::abi::kManifestSizes, sizeof(m),
                                      bytes.data(), m.struct_size);
}

}  // namespace

std::vector<std::string> DefaultModuleDirs() {
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {"modules"};
  const auto dir = exe.parent_path();
  return {(dir / "modules").string(), (dir.parent_path() / "lib" / "vessel" / "modules").string()};
}

std::string ResolvePath(const std::string& path, const std::vector<std::string>& dirs) {
  if (path.find('/') != std::string::npos ||
      (path.size() > 3 && path.compare(path.size() - 3, 3, ".so") == 0))
    return path;
  for (const auto& d : dirs) {
    const std::string candidate = d + "/" + path + ".so";
    if (access(candidate.c_str(), F_OK) == 0) return candidate;
  }
  return dirs.empty() ? path + ".so" : dirs.front() + "/" + path + ".so";
}

bool ReadManifest(const std::string& path, vsl_manifest* out, std::string* error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *error = Cat("cannot open ", path, ": ", std::strerror(errno));
    return false;
  }
  Elf64_Ehdr eh;
  if (!ReadAt(f, 0, &eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr)) {
    *error = Cat(path, " is not a 64-bit ELF shared object");
    return false;
  }
  Elf64_Shdr names;
  if (eh.e_shstrndx >= eh.e_shnum ||
      !ReadAt(f, eh.e_shoff + uint64_t{eh.e_shstrndx} * sizeof(Elf64_Shdr), &names)) {
    *error = Cat(path, ": unreadable ELF section table");
    return false;
  }
  for (uint16_t i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    if (!ReadAt(f, eh.e_shoff + uint64_t{i} * sizeof(Elf64_Shdr), &sh)) break;
    char name[sizeof(VSL_MANIFEST_SECTION)] = {};
    if (sh.sh_name >= names.sh_size ||
        !ReadAt(f, names.sh_offset + sh.sh_name, name, sizeof(name)) ||
        std::memcmp(name, VSL_MANIFEST_SECTION, sizeof(name)) != 0)
      continue;
    vsl_manifest m{};
    const size_t n = std::min<uint64_t>(sh.sh_size, sizeof(m));
    // Each check names what failed, so the author of a broken module knows what to fix.
    std::string why;
    if (n < offsetof(vsl_manifest, version) || !ReadAt(f, sh.sh_offset, &m, n)) {
      why = "section too small";
    } else if (m.magic != VSL_MANIFEST_MAGIC) {
      why = "bad magic (not built with VSL_MODULE?)";
    } else if (std::string size = SizeProblem(f, sh, m); !size.empty()) {
      why = size;
    } else if (!FixedString(m.name, sizeof(m.name))) {
      why = "name not NUL-terminated";
    } else if (m.name[0] == '\0') {
      why = "empty module name";
    } else if (!FixedString(m.version, sizeof(m.version))) {
      why = "version not NUL-terminated";
    }
    if (!why.empty()) {
      *error = Cat(path, ": malformed vsl_manifest section: ", why);
      return false;
    }
    *out = m;
    return true;
  }
  *error = Cat(path, ": no vsl_manifest section (not a Vessel module? define VSL_MODULE)");
  return false;
}

std::string CheckAbi(const vsl_manifest& m) {
  if (m.abi_major != VSL_ABI_MAJOR)
    return Cat("built for ABI major ", m.abi_major, ", host has ABI ", VSL_ABI_MAJOR, ".",
               VSL_ABI_MINOR);
  if (m.min_abi_minor > VSL_ABI_MINOR)
    return Cat("needs ABI ", m.abi_major, ".", m.min_abi_minor, ", host has ", VSL_ABI_MAJOR, ".",
               VSL_ABI_MINOR);
  return "";
}

bool LoadModule(engine::Engine* engine, const config::ModuleConfig& mc,
                const std::vector<std::string>& dirs, std::string* error) {
  const std::string path = ResolvePath(mc.path, dirs);
  auto fail = [&](std::string_view name, std::string_view why) {
    *error = Cat("module ", name, ": ", why);
    return false;
  };
  vsl_manifest manifest;
  std::string why;
  if (!ReadManifest(path, &manifest, &why)) return fail(mc.path, why);
  const std::string name = manifest.name;
  if (std::string abi = CheckAbi(manifest); !abi.empty()) return fail(name, abi);
  for (const auto& m : engine->registry().modules()) {
    if (m->name == name) return fail(name, Cat("a module named '", name, "' is already loaded"));
  }
  if (engine->registry().modules().size() + 1 >= engine::memory::kMaxModules)
    return fail(name, "too many modules");

  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return fail(name, Cat("dlopen failed: ", dlerror()));
  auto init = reinterpret_cast<vsl_init_fn>(dlsym(handle, VSL_INIT_SYMBOL));
  if (init == nullptr) {
    dlclose(handle);
    return fail(name, Cat("missing symbol ", VSL_INIT_SYMBOL));
  }

  auto owned = std::make_unique<vsl_module>();
  owned->name = name;
  owned->version = manifest.version;
  owned->path = path;
  owned->args = mc.args;
  owned->handle = handle;
  owned->registry = &engine->registry();
  vsl_module* m = engine->registry().AddModule(std::move(owned));

  std::vector<vsl_slice> args;
  for (const auto& a : m->args) args.push_back({a.data(), a.size()});
  char err[512] = {};
  int rc;
  {
    engine::memory::ModuleScope scope(m->id);
    m->initializing = true;
    rc = init(engine->api(), m, args.data(), args.size(), err, sizeof(err));
    m->initializing = false;
  }
  err[sizeof(err) - 1] = '\0';
  // A failed registration stops the load even if the module ignored the return value.
  if (!m->last_error.empty()) return fail(name, m->last_error);
  if (rc != VSL_OK) return fail(name, Cat("init failed: ", err[0] ? err : "(no message)"));
  if (std::string why = engine->registry().CheckContainers(m); !why.empty()) return fail(name, why);
  spdlog::info("module loaded name={} version={} commands={} types={} path={}", name, m->version,
               m->commands.size(), m->types.size(), path);
  return true;
}

}  // namespace vessel::modules
