#include "spec/framework_roles.h"

namespace shoal {
namespace {

const std::vector<FrameworkRoles>& Table() {
  static const std::vector<FrameworkRoles> table = {
      {"tensorflow",
       {{"chief", false, 1, false}, {"worker", true, 0, false}, {"ps", false, 0, true}, {"evaluator", false, 1, true}}},
      {"mxnet", {{"scheduler", true, 1, true}, {"server", false, 0, true}, {"worker", true, 0, false}}},
      {"xgboost", {{"worker", true, 0, false}}},
      {"mpi", {{"worker", true, 0, false}}},
      {"shoal-train", {{"worker", true, 0, false}}},
  };
  return table;
}

}  // namespace

const FrameworkRoles* RolesOf(const std::string& framework) {
  for (const auto& entry : Table()) {
    if (entry.framework == framework) return &entry;
  }
  return nullptr;
}

bool DefaultService(const std::string& framework, const std::string& role) {
  if (const FrameworkRoles* rules = RolesOf(framework)) {
    for (const auto& rule : rules->roles) {
      if (rule.name == role) return rule.service;
    }
    return false;
  }
  return role == "ps";
}

}  // namespace shoal
