// The server as a whole: engine, modules and network, with a start/stop lifecycle.
#include "host/server.h"

#include <csignal>
#include <cstdlib>

#include "host/cluster/node.h"
#include "host/modules/loader.h"
#include "spdlog/spdlog.h"

namespace vessel {
namespace {

// A cluster node's hold on replication (host/cluster's ReplicationControl over host/repl).
class ClusterReplication : public cluster::ReplicationControl {
 public:
  explicit ClusterReplication(repl::Replication* r) : r_(r) {}
  void Follow(const std::string& ip, int port) override { r_->Follow(ip, port); }
  void Promote() override { r_->Promote(); }
  uint64_t Offset() override { return r_->Offset(); }
  int64_t MasterSilenceMs(int64_t now_ms) override { return r_->MasterSilenceMs(now_ms); }
  void PauseWrites(bool on) override { r_->PauseForFailover(on); }

 private:
  repl::Replication* r_;
};

}  // namespace

Server::Server(config::Config config, std::string config_file)
    : config_(std::move(config)),
      engine_(std::make_unique<engine::Engine>(config_)),
      scripting_(scripting::Install(engine_.get())),
      net_(std::make_unique<net::NetServer>(engine_.get())) {
  engine_->set_config_file(std::move(config_file));
  engine_->set_shutdown_handler([this] { RequestStop(); });
}

Server::~Server() { Stop(); }

bool Server::Start(std::string* error) {
  // Persistence first: its commands are in the table the ACL and modules see; its settings are
  // checked before anything is loaded.
  persist_ = std::make_unique<persist::Persistence>(engine_.get());
  persist::Persistence::RegisterCommands(engine_->registry());
  if (!persist_->Init(error)) return false;
  engine_->set_persist(persist_.get());
  repl_ = std::make_unique<repl::Replication>(engine_.get(), persist_.get());
  repl::Replication::RegisterCommands(engine_->registry());
  engine_->set_repl(repl_.get());
  cluster::Node::RegisterCommands(engine_->registry());
  const auto dirs = modules::DefaultModuleDirs();
  for (const auto& m : config_.modules) {
    if (!modules::LoadModule(engine_.get(), m, dirs, error)) return false;
  }
  if (!net_->Listen(error)) return false;  // makes the workers pub/sub sizes its slots by
  pubsub_ = pubsub::Install(engine_.get());
  {
    // Cluster mode: the node knows its client port once bound; nodes.conf lives in the dir.
    std::string why;
    // A message published on another node reaches this node's subscribers as a PUBLISH on
    // worker 0 would.
    auto deliver = [engine = engine_.get(), pubsub = pubsub_.get()](
                       const std::string& channel, const std::string& message, bool shard) {
      engine->executor(0).Post([pubsub, channel, message, shard] {
        pubsub->hub().Publish(shard ? pubsub::Space::kShard : pubsub::Space::kChannel, channel,
                              message);
      });
    };
    std::unique_ptr<cluster::Node> node =
        cluster::StartNode(engine_.get(), net_->port(),
                           std::make_unique<ClusterReplication>(repl_.get()), deliver, &why);
    if (!why.empty()) {
      *error = std::move(why);
      return false;
    }
    cluster_node_ = node.get();
    if (node != nullptr) engine_->set_cluster(std::move(node));
  }
  // ACL rules name module commands and the pub/sub commands: installed after both, before the
  // workers serve.
  acl_ = acl::InstallAcl(engine_.get(), error);
  if (acl_ == nullptr) return false;
  engine_->set_loading(true);  // until LoadAtStartup has the dataset in memory
  net_->Start();
  // The dataset loads while the workers serve: commands get -LOADING until it is in memory.
  if (!persist_->LoadAtStartup(error, [this](std::string* why) {
        return cluster_node_ == nullptr || VerifyClusterWithData(why);
      }))
    return false;
  // Replication starts once the dataset is loaded (a replica then replaces it with its master's).
  if (!repl_->Start(error)) return false;
  spdlog::info("ready to accept connections port={} threads={} modules={}", net_->port(),
               engine_->worker_count(), engine_->registry().modules().size());
  return true;
}

bool Server::ShutdownOnSignal(int sig) {
  // Redis's shutdown-on-sigterm / shutdown-on-sigint: "default" or words among save, nosave, now,
  // force.
  const std::string how = engine_->settings().params.Text(
      engine::ParamValues::Find(sig == SIGINT ? "shutdown-on-sigint" : "shutdown-on-sigterm"));
  engine::Engine::ShutdownFlags flags;
  for (const std::string& w : engine::SplitWords(how)) {
    if (w == "save") flags.save = 1;
    if (w == "nosave") flags.save = 0;
    if (w == "now") flags.now = true;
    if (w == "force") flags.force = true;
  }
  // A second SIGINT while the shutdown waits for replicas: as Redis, exit at once, unsaved.
  if (sig == SIGINT && engine_->ShutdownRemainingMs() >= 0) {
    spdlog::warn("You insist... exiting now.");
    std::_Exit(1);
  }
  spdlog::warn("User requested shutdown... signal={}", sig);
  // Lagging replicas: the shutdown's own thread finishes it (or SHUTDOWN ABORT cancels it).
  uint64_t generation = 0;
  if (engine_->BeginShutdown(flags, &generation)) return false;
  std::string error;
  return engine_->FinishShutdown(flags, &error);
}

// As Redis after loading in cluster mode: keys only in db 0, and the node's slots agree with them.
bool Server::VerifyClusterWithData(std::string* error) {
  for (int d = 1; d < engine_->db_count(); ++d) {
    if (engine_->db(d).KeyCount() != 0) {
      *error = "You can't have keys in a DB different than DB 0 when in Cluster mode. Exiting.";
      return false;
    }
  }
  cluster_node_->VerifyWithData();
  return true;
}

void Server::RequestStop() {
  // Notified under the lock: the waiter destroys the server once it is awake.
  std::lock_guard l(mu_);
  stop_requested_ = true;
  cv_.notify_all();
}

void Server::Wait() {
  std::unique_lock l(mu_);
  cv_.wait(l, [this] { return stop_requested_; });
}

void Server::Stop() {
  if (net_ == nullptr) return;
  engine_->StopShutdownWaiter();  // it asks replication and persistence
  if (engine_->cluster() != nullptr) engine_->cluster()->Stop();  // releases the bus port now
  cluster::StopMigrations();            // MIGRATE's threads wake no client once the workers go
  if (repl_ != nullptr) repl_->Stop();  // the link thread applies commands: before the workers
  if (persist_ != nullptr) persist_->StopSnapshot();
  // A script looping in a worker would keep it from stopping: scripts end at their next hook.
  if (engine::BusyProbe* probe = engine_->busy_probe()) probe->OnShutdown();
  net_->Stop();
  net_.reset();
  scripting_.reset();  // after the workers, before the engine it registered with
  engine_->set_messaging(nullptr);
  pubsub_.reset();
  engine_->set_repl(nullptr);
  repl_.reset();
  if (persist_ != nullptr) engine_->set_persist(nullptr);
  persist_.reset();
  engine_.reset();
  acl_.reset();  // frees every value while the modules are loaded
}

}  // namespace vessel
