#include "common/json.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

std::string Refusal(const std::string& text) {
  Result<Json> parsed = ParseJson(text, "the body");
  return parsed.ok() ? "" : parsed.status().message();
}

TEST(ParseJson, RefusesAKeyGivenTwiceInOneObjectNamingIt) {
  EXPECT_EQ(Refusal(R"({"spec": {"roles": {"w": {"instances": 1, "instances": 2}}}})"),
            "the body gives the key 'instances' twice in one object; give each key once");
  EXPECT_NE(Refusal(R"({"roles": {"w": {}, "w": {}}})").find("'w' twice"), std::string::npos);
  EXPECT_NE(Refusal(R"([{"a": 1}, {"b": [{"c": 1, "c": 1}]}])").find("'c' twice"), std::string::npos);
}

TEST(ParseJson, TheSameKeyInDifferentObjectsIsFine) {
  EXPECT_EQ(Refusal(R"({"a": {"name": 1}, "b": {"name": 2}, "list": [{"name": 3}, {"name": 4}], "name": 5})"), "");
  EXPECT_EQ(Refusal(R"({"a": {"a": {"a": 1}}})"), "");
}

TEST(ParseJson, RefusesWhatIsNotJsonAndWhatNestsTooDeep) {
  EXPECT_EQ(Refusal("{"), "the body is not valid JSON");
  EXPECT_NE(Refusal(std::string(100, '[') + std::string(100, ']')).find("more than 64 levels"), std::string::npos);
}

}  // namespace
}  // namespace shoal
