#include "client/queues_command.h"

#include <cstdio>
#include <sstream>

#include "common/units.h"

namespace shoal {

namespace {

std::string Percent(double share) {
  char text[16];
  std::snprintf(text, sizeof text, "%g%%", share * 100);
  return text;
}

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text + " ";
}

// "8 CPUs, 32G, 2 GPUs", leaving out what is 0; `none` when all are.
std::string Amounts(const Json& resources, const char* none) {
  std::string text;
  auto add = [&](const std::string& part) { text += (text.empty() ? "" : ", ") + part; };
  char cpus[32];
  std::snprintf(cpus, sizeof cpus, "%g CPUs", resources.value("cpus", 0.0));
  if (resources.value("cpus", 0.0) > 0) add(cpus);
  if (resources.value("memory_bytes", int64_t{0}) > 0) add(FormatMemory(resources.value("memory_bytes", int64_t{0})));
  if (resources.value("gpus", 0) > 0) add(std::to_string(resources.value("gpus", 0)) + " GPUs");
  return text.empty() ? none : text;
}

}  // namespace

std::string RenderQueues(const Json& reply) {
  std::ostringstream out;
  out << Pad("QUEUE", 12) << Pad("GUARANTEE", 10) << Pad("MAX", 6) << Pad("SHARE", 7) << Pad("RUNNING", 8)
      << Pad("WAITING", 8) << Pad("USES", 24) << "USER LIMIT\n";
  for (const Json& queue : reply.value("queues", Json::array())) {
    std::string share = Percent(queue.value("share", 0.0)) + (queue.value("borrowing", false) ? "*" : "");
    out << Pad(queue.value("name", ""), 12) << Pad(Percent(queue.value("guarantee", 0.0)), 10)
        << Pad(Percent(queue.value("max", 1.0)), 6) << Pad(share, 7) << Pad(std::to_string(queue.value("running", 0)), 8)
        << Pad(std::to_string(queue.value("waiting", Json::array()).size()), 8)
        << Pad(Amounts(queue.value("used", Json::object()), "nothing"), 24)
        << Amounts(queue.value("user_limit", Json::object()), "none") << "\n";
  }
  // Queues held below their guarantees by the size of their jobs, and those paying it back.
  for (const Json& queue : reply.value("queues", Json::array())) {
    const int64_t credit_ms = queue.value("credit_ms", int64_t{0});
    if (credit_ms == 0) continue;
    const std::string owed = FormatDuration(credit_ms > 0 ? credit_ms : -credit_ms) + " at its whole guarantee";
    out << "queue " << queue.value("name", "")
        << (credit_ms > 0 ? " is owed " + owed +
                                " (its jobs were too large for what it had left of its guarantee): its next job may "
                                "start beyond its guarantee\n"
                          : " owes " + owed +
                                " (it ran beyond its guarantee while its jobs waited): it pays it back while it waits "
                                "below its guarantee\n");
  }
  // Where queues map to Slurm partitions or QOS (queues.yaml's slurm:), one line each.
  for (const Json& queue : reply.value("queues", Json::array())) {
    const Json slurm = queue.value("slurm", Json::object());
    if (slurm.empty()) continue;
    out << "queue " << queue.value("name", "") << " runs on Slurm";
    if (slurm.contains("partition")) out << " partition " << slurm.value("partition", "");
    if (slurm.contains("qos")) out << (slurm.contains("partition") ? "," : "") << " QOS " << slurm.value("qos", "");
    out << "\n";
  }
  if (const Json levels = reply.value("service_levels_gpu_hours", Json::array()); !levels.empty()) {
    std::string list;
    for (const Json& level : levels) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", level.get<double>());
      list += (list.empty() ? "" : ", ") + std::string(text);
    }
    out << "within a queue the least served jobs go first (service levels " << list
        << " GPU-hours); a running job that checkpoints may be preempted after "
        << FormatDuration(reply.value("min_run_before_preemption_ms", int64_t{0})) << "\n";
  }
  out << "(* borrowing beyond its guarantee; shares are of " << Amounts(reply.value("capacity", Json::object()), "nothing")
      << "; a job waits at most max_wait " << FormatDuration(reply.value("max_wait_ms", int64_t{0}))
      << " before it goes first, and one that has run max_wait_to_resume "
      << FormatDuration(reply.value("max_wait_to_resume_ms", int64_t{0})) << " in all; configured in "
      << reply.value("file", std::string("queues.yaml")) << ")\n";
  for (const Json& queue : reply.value("unconfigured", Json::array())) {
    std::string waiting;
    for (const Json& id : queue.value("waiting", Json::array())) {
      waiting += (waiting.empty() ? "" : ", ") + id.get<std::string>();
    }
    out << "queue " << queue.value("name", "") << " is no longer configured but holds jobs: "
        << queue.value("running", 0) << " running (they run to their end, using "
        << Amounts(queue.value("used", Json::object()), "nothing") << ")";
    if (!waiting.empty()) {
      out << ", waiting: " << waiting
          << " (they start only if the queue is configured again: kill them and submit them to a configured queue)";
    }
    out << "\n";
  }
  if (std::string error = reply.value("error", ""); !error.empty()) {
    out << "the file was changed but not reloaded, the queues above stay in force: " << error << "\n";
  }
  return out.str();
}

void AddQueuesCommand(CLI::App& app, ClientContext& ctx) {
  auto* cmd = app.add_subcommand("queues", "Show the server's queues: guarantees, limits, use and waiting jobs "
                                           "(configured in queues.yaml in the server's home; docs/scheduling.md).");
  cmd->add_flag("--json", ctx.json, "print the API's JSON");
  cmd->callback([&ctx] {
    WithServer(ctx, [&](const HttpJsonClient& server) -> Status {
      ASSIGN_OR_RETURN(Json reply, server.Get("/api/v1/queues"));
      if (ctx.json) {
        std::printf("%s\n", reply.dump(2).c_str());
      } else {
        std::fputs(RenderQueues(reply).c_str(), stdout);
      }
      return Status::Ok();
    });
  });
}

}  // namespace shoal
