#include "train/solver_type.h"

#include <sstream>

namespace shoal::train {
namespace {

std::string Format(float v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

}  // namespace

std::optional<SolverProblem> UpgradeSolverType(caffe::SolverParameter& solver) {
  if (solver.has_solver_type()) {
    if (solver.has_type()) {
      return SolverProblem{"solver_type",
                           "give the solver's type once: `type: \"" + solver.type() +
                               "\"` or the old `solver_type` enum, not both"};
    }
    static const char* const kNames[] = {"SGD", "Nesterov", "AdaGrad", "RMSProp", "AdaDelta", "Adam"};
    solver.set_type(kNames[solver.solver_type()]);
    solver.clear_solver_type();
  }
  const std::string& type = solver.type();
  if ((type == "AdaGrad" || type == "RMSProp") && solver.momentum() != 0) {
    return SolverProblem{"momentum", "momentum cannot be used with " + type + " (remove it, or set it to 0)"};
  }
  if (type == "RMSProp" && (solver.rms_decay() < 0 || solver.rms_decay() >= 1)) {
    return SolverProblem{"rms_decay", "rms_decay must lie in [0, 1), not " + Format(solver.rms_decay())};
  }
  if (solver.average_loss() < 1) {
    return SolverProblem{"average_loss", "average_loss must be at least 1 (the losses the displayed loss is averaged over)"};
  }
  return std::nullopt;
}

}  // namespace shoal::train
