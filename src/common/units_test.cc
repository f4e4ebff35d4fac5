#include "common/units.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(ParseMemory, AcceptsSuffixesAndPlainBytes) {
  EXPECT_EQ(ParseMemory("512M").value(), 512LL << 20);
  EXPECT_EQ(ParseMemory("4G").value(), 4LL << 30);
  EXPECT_EQ(ParseMemory("4Gi").value(), 4LL << 30);
  EXPECT_EQ(ParseMemory("2gb").value(), 2LL << 30);
  EXPECT_EQ(ParseMemory("1.5G").value(), 3LL << 29);
  EXPECT_EQ(ParseMemory("1048576").value(), 1LL << 20);
  EXPECT_EQ(ParseMemory(" 64K ").value(), 64LL << 10);
}

TEST(ParseMemory, RefusesMalformedSizes) {
  for (const char* bad : {"", "G", "4X", "-1G", "0", "0M", "four", "1.2.3G", "4 G B", "99999999999T"}) {
    auto result = ParseMemory(bad);
    EXPECT_FALSE(result.ok()) << bad;
    if (!result.ok()) {
      EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

TEST(ParseDuration, AcceptsUnits) {
  EXPECT_EQ(ParseDuration("30s").value(), 30'000);
  EXPECT_EQ(ParseDuration("5m").value(), 300'000);
  EXPECT_EQ(ParseDuration("1.5h").value(), 5'400'000);
  EXPECT_EQ(ParseDuration("250ms").value(), 250);
  EXPECT_EQ(ParseDuration("10").value(), 10'000);
  EXPECT_FALSE(ParseDuration("10d").ok());
  EXPECT_FALSE(ParseDuration("soon").ok());
}

TEST(Format, ReadsBack) {
  EXPECT_EQ(FormatMemory(512LL << 20), "512M");
  EXPECT_EQ(FormatMemory(3LL << 29), "1.5G");
  EXPECT_EQ(FormatDuration(850), "850ms");
  EXPECT_EQ(FormatDuration(12'300), "12.3s");
  EXPECT_EQ(FormatDuration(245'000), "4m05s");
}

}  // namespace
}  // namespace shoal
