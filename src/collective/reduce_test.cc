#include "collective/reduce.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace shoal::collective {
namespace {

TEST(ReduceTest, SumMinMaxAndScale) {
  std::vector<int32_t> a = {1, -5, 7, 0}, b = {2, 3, -7, 9};
  auto acc = a;
  Reduce(DataType::kInt32, ReduceOp::kSum, acc.data(), b.data(), acc.size());
  EXPECT_EQ(acc, (std::vector<int32_t>{3, -2, 0, 9}));
  acc = a;
  Reduce(DataType::kInt32, ReduceOp::kMin, acc.data(), b.data(), acc.size());
  EXPECT_EQ(acc, (std::vector<int32_t>{1, -5, -7, 0}));
  acc = a;
  Reduce(DataType::kInt32, ReduceOp::kMax, acc.data(), b.data(), acc.size());
  EXPECT_EQ(acc, (std::vector<int32_t>{2, 3, 7, 9}));
  std::vector<int32_t> s = {7, -7, 8};
  Scale(DataType::kInt32, s.data(), s.size(), 2);
  EXPECT_EQ(s, (std::vector<int32_t>{3, -3, 4}));  // truncates toward zero
}

TEST(ReduceTest, FloatingTypes) {
  std::vector<double> a = {1.5, -2.0}, b = {0.25, 4.0};
  Reduce(DataType::kFloat64, ReduceOp::kAverage, a.data(), b.data(), a.size());
  Scale(DataType::kFloat64, a.data(), a.size(), 2);
  EXPECT_DOUBLE_EQ(a[0], 0.875);
  EXPECT_DOUBLE_EQ(a[1], 1.0);
  std::vector<float> f = {1.0f, 2.0f}, g = {3.0f, -1.0f};
  Reduce(DataType::kFloat32, ReduceOp::kMax, f.data(), g.data(), f.size());
  EXPECT_EQ(f, (std::vector<float>{3.0f, 2.0f}));
  std::vector<int64_t> x = {1LL << 40}, y = {1};
  Reduce(DataType::kInt64, ReduceOp::kSum, x.data(), y.data(), 1);
  EXPECT_EQ(x[0], (1LL << 40) + 1);
}

}  // namespace
}  // namespace shoal::collective
