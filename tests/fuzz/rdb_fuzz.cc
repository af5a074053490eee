// Fuzzes the RDB loader (rdb_load_fuzz: the input is a whole RDB file, loaded with checksums off so
// mutations reach the decoders) and the DUMP payload decoder (dump_payload_fuzz: the input is a
// value record, framed with a valid version and CRC64 so it reaches the decoder, then restored).
// Both run over the real engine with the in-tree modules, so decoded values are built by the
// families' own commands. Anything but a clean error or a loaded value is a bug.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "host/config/config.h"
#include "host/config/params.h"
#include "host/engine/engine.h"
#include "host/modules/loader.h"
#include "host/persist/persistence.h"
#include "host/persist/rdb_file.h"

namespace {

struct World {
  std::unique_ptr<vessel::engine::Engine> engine;
  std::unique_ptr<vessel::persist::Persistence> persist;
  World() {
    vessel::config::Config cfg = vessel::config::Defaults();
    cfg.storage.shards = 4;
    std::string why;
    vessel::config::SetGenericParam(&cfg, "rdbchecksum", "no", &why);
    engine = std::make_unique<vessel::engine::Engine>(cfg);
    const std::vector<std::string> dirs = {VESSEL_FUZZ_MODULE_DIR};
    for (const auto& m : cfg.modules) vessel::modules::LoadModule(engine.get(), m, dirs, &why);
    persist = std::make_unique<vessel::persist::Persistence>(engine.get());
    engine->set_persist(persist.get());
  }
  void Flush() {
    vessel::engine::WorldExclusive world(engine.get());
    for (auto& db : engine->dbs()) engine->FlushDb(*db, false);
  }
};

World& Get() {
  static World* w = new World();
  return *w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  World& w = Get();
  const std::string_view input(reinterpret_cast<const char*>(data), size);
#ifdef VESSEL_FUZZ_DUMP
  std::string error;
  void* v = w.persist->DecodePayload(vessel::persist::MakeDumpPayload(input), &error);
  if (v != nullptr) w.persist->FreeDecoded(v);
#else
  // Files start with the magic and version; let the fuzzer spend its bytes on what follows.
  std::string file = "REDIS0010";
  file.append(input);
  vessel::persist::LoadStats stats;
  std::string error;
  vessel::persist::LoadRdbBytes(*w.engine, file, false, &stats, &error);
  w.Flush();
#endif
  return 0;
}
