#include "server/log_files.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/scratch_directory.h"

namespace shoal {
namespace {

TEST(LogFiles, ReadsChunksAndSearchesLines) {
  testing_support::ScratchDirectory scratch("log");
  std::string path = scratch / "task.log";
  {
    std::ofstream out(path);
    out << "epoch 1 loss=0.9\n<script>alert(1)</script>\nEPOCH 2 loss=0.5\nno newline at the end";
  }
  Json chunk = ReadLogChunk(path, 6, 10);
  EXPECT_EQ(chunk["text"], "1 loss=0.9");
  EXPECT_EQ(chunk["next_offset"], 16);
  EXPECT_EQ(ReadLogChunk(path, 1 << 20, 10)["text"], "") << "an offset past the end reads nothing";
  EXPECT_EQ(ReadLogChunk(path + ".missing", 0, 10)["size"], 0);

  Json found = SearchLog(path, "epoch", 10).value();
  ASSERT_EQ(found["matches"].size(), 2u) << "case-insensitive";
  EXPECT_EQ(found["matches"][1]["line"], 3);
  EXPECT_EQ(SearchLog(path, "<script>", 10).value()["matches"][0]["text"], "<script>alert(1)</script>");
  EXPECT_EQ(SearchLog(path, "[", 10).value()["matches"].size(), 0u) << "plain text, not a pattern";
  Json capped = SearchLog(path, "o", 1).value();
  EXPECT_EQ(capped["matches"].size(), 1u);
  EXPECT_TRUE(capped["truncated"].get<bool>());
  EXPECT_EQ(SearchLog(path, "", 10).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace shoal
