#include "common/paths.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

#include "common/secret.h"

namespace shoal {

std::string ShoalHome() {
  if (const char* home = std::getenv("SHOAL_HOME"); home && *home) return home;
  const char* user_home = std::getenv("HOME");
  if (!user_home || !*user_home) {
    passwd* pw = getpwuid(getuid());
    user_home = pw ? pw->pw_dir : "/tmp";
  }
  return std::string(user_home) + "/.shoal";
}

std::string CurrentUserName() {
  if (const char* user = std::getenv("USER"); user && *user) return user;
  if (passwd* pw = getpwuid(getuid())) return pw->pw_name;
  return std::to_string(getuid());
}

std::string ServerId(const std::string& host_name, const std::string& home) {
  return HmacSha256Hex("shoal server id", host_name + ":" + home).substr(0, 8);
}

std::string HostName() {
  char name[256] = {};
  (void)gethostname(name, sizeof name - 1);
  return name;
}

}  // namespace shoal
