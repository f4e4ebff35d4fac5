// Framework roles: the role vocabulary of each framework Shoal knows, as data, so the
// spec parser can refuse a role a framework does not have (a TensorFlow job with a
// "scheduler") and default each role's `service` flag, with the offending line.
//
// Contract: RolesOf returns nullptr for a framework without rules (any role names; "ps"
// is a service). Counts are per role: min and max instances (max 0: no limit).
// Thread-safety: immutable data.
#pragma once

#include <string>
#include <vector>

namespace shoal {

struct RoleRule {
  std::string name;
  bool required = false;     // the job must have this role
  int max_instances = 0;     // 0: any number
  bool service = false;      // runs until the other roles finish, then is stopped
};

struct FrameworkRoles {
  std::string framework;
  std::vector<RoleRule> roles;  // the only roles the framework allows
};

const FrameworkRoles* RolesOf(const std::string& framework);
// Whether a role is a service by default.
bool DefaultService(const std::string& framework, const std::string& role);

}  // namespace shoal
