#include "train/learning_rate.h"

#include <cmath>
#include <string>

namespace shoal::train {

double LearningRate(const caffe::SolverParameter& s, int64_t iter) {
  const std::string policy = s.has_lr_policy() ? s.lr_policy() : "fixed";
  const double base = s.base_lr();
  const double at = static_cast<double>(iter);
  if (policy == "step") return base * std::pow(s.gamma(), std::floor(at / s.stepsize()));
  if (policy == "exp") return base * std::pow(s.gamma(), at);
  if (policy == "inv") return base * std::pow(1.0 + s.gamma() * at, -s.power());
  if (policy == "multistep") return base * std::pow(s.gamma(), CurrentStep(s, iter));
  if (policy == "poly") return base * std::pow(1.0 - at / s.max_iter(), s.power());
  return base;
}

int CurrentStep(const caffe::SolverParameter& s, int64_t iter) {
  const std::string policy = s.has_lr_policy() ? s.lr_policy() : "fixed";
  if (policy == "step") return static_cast<int>(iter / s.stepsize());
  if (policy != "multistep") return 0;
  int reached = 0;
  while (reached < s.stepvalue_size() && iter >= s.stepvalue(reached)) ++reached;
  return reached;
}

}  // namespace shoal::train
