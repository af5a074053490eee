// Loading modules: resolve the path, read and check the manifest from the file before any module
// code runs, dlopen(RTLD_NOW | RTLD_LOCAL), call vsl_module_init with the API table.
#ifndef VESSEL_HOST_MODULES_LOADER_H_
#define VESSEL_HOST_MODULES_LOADER_H_

#include <string>
#include <vector>

#include "host/config/config.h"
#include "host/engine/engine.h"
#include "vessel/module.h"

namespace vessel::modules {

// Directories searched for a bare module name: <dir of the executable>/modules, then
// <dir of the executable>/../lib/vessel/modules.
std::vector<std::string> DefaultModuleDirs();

// Resolves a module path from the config: a name containing '/' or ending in ".so" is a file
// path; a bare name is <dir>/<name>.so in the first directory that has it.
std::string ResolvePath(const std::string& path, const std::vector<std::string>& dirs);

// Reads the vsl_manifest section of an ELF shared object without loading it.
bool ReadManifest(const std::string& path, vsl_manifest* out, std::string* error);

// Checks a manifest against this host's ABI; "" when acceptable, else the reason.
std::string CheckAbi(const vsl_manifest& m);

// Loads and initialises one module into the engine. On failure *error is one line naming the
// module and the reason; the process should not serve.
bool LoadModule(engine::Engine* engine, const config::ModuleConfig& mc,
                const std::vector<std::string>& dirs, std::string* error);

}  // namespace vessel::modules

#endif  // VESSEL_HOST_MODULES_LOADER_H_
