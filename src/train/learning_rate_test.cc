#include "train/learning_rate.h"

#include <gtest/gtest.h>

#include <string>

#include "train/prototxt.h"

namespace shoal::train {
namespace {

caffe::SolverParameter Solver(const std::string& fields) {
  auto solver = ParseSolverText("net: \"n\"\nmax_iter: 100\n" + fields, "solver.prototxt");
  EXPECT_TRUE(solver.ok()) << solver.status().message();
  return solver.ok() ? *solver : caffe::SolverParameter{};
}

// Caffe's solver fields are floats (base_lr 0.1 is 0.100000001...): a rate is right to
// float precision.
void ExpectRate(double actual, double expected) { EXPECT_NEAR(actual, expected, 1e-7 * expected + 1e-12); }

// Each value below is worked out by hand from the policy's formula in Caffe's
// SGDSolver::GetLearningRate, not from this implementation.
TEST(LearningRate, FixedIsTheBaseRateAtEveryIteration) {
  auto s = Solver("base_lr: 0.3\nlr_policy: \"fixed\"\ngamma: 0.5\n");
  ExpectRate(LearningRate(s, 0), 0.3);
  ExpectRate(LearningRate(s, 99), 0.3);
  ExpectRate(LearningRate(Solver("base_lr: 0.3\n"), 50), 0.3);  // fixed is the default
}

TEST(LearningRate, StepDropsByGammaEveryStepsize) {
  auto s = Solver("base_lr: 0.1\nlr_policy: \"step\"\ngamma: 0.5\nstepsize: 10\n");
  ExpectRate(LearningRate(s, 9), 0.1);
  ExpectRate(LearningRate(s, 10), 0.05);
  ExpectRate(LearningRate(s, 25), 0.025);
}

TEST(LearningRate, ExpMultipliesByGammaEachIteration) {
  auto s = Solver("base_lr: 1\nlr_policy: \"exp\"\ngamma: 0.5\n");
  ExpectRate(LearningRate(s, 0), 1.0);
  ExpectRate(LearningRate(s, 3), 0.125);
}

TEST(LearningRate, PolyFallsToZeroAtMaxIter) {
  auto s = Solver("base_lr: 0.1\nlr_policy: \"poly\"\npower: 2\n");
  ExpectRate(LearningRate(s, 0), 0.1);
  ExpectRate(LearningRate(s, 50), 0.025);  // 0.1 * (1 - 50/100)^2
  ExpectRate(LearningRate(s, 100), 0.0);
}

TEST(LearningRate, InvIsLeNetsSchedule) {
  // examples/mnist/lenet_solver.prototxt: base_lr 0.01, gamma 0.0001, power 0.75.
  auto s = Solver("base_lr: 0.01\nlr_policy: \"inv\"\ngamma: 0.0001\npower: 0.75\n");
  ExpectRate(LearningRate(s, 0), 0.01);
  ExpectRate(LearningRate(s, 10000), 0.01 * 0.59460355750136051);  // 0.01 * 2^-0.75
  ExpectRate(LearningRate(s, 5000), 0.01 * 0.7377879464668811);  // 0.01 * 1.5^-0.75
}

TEST(LearningRate, MultistepDropsAtEachStepvalue) {
  auto s = Solver("base_lr: 0.01\nlr_policy: \"multistep\"\ngamma: 0.1\nstepvalue: 30\nstepvalue: 60\n");
  ExpectRate(LearningRate(s, 29), 0.01);
  ExpectRate(LearningRate(s, 30), 0.001);
  ExpectRate(LearningRate(s, 59), 0.001);
  ExpectRate(LearningRate(s, 60), 0.0001);
  ExpectRate(LearningRate(s, 99), 0.0001);
}

TEST(LearningRate, CurrentStepAsCaffeRecordsIt) {
  auto multistep = Solver("base_lr: 0.01\nlr_policy: \"multistep\"\ngamma: 0.1\nstepvalue: 30\nstepvalue: 60\n");
  EXPECT_EQ(CurrentStep(multistep, 29), 0);
  EXPECT_EQ(CurrentStep(multistep, 30), 1);
  EXPECT_EQ(CurrentStep(multistep, 1000), 2);
  auto step = Solver("base_lr: 0.01\nlr_policy: \"step\"\ngamma: 0.1\nstepsize: 100\n");
  EXPECT_EQ(CurrentStep(step, 250), 2);
  EXPECT_EQ(CurrentStep(Solver("base_lr: 0.01\nlr_policy: \"inv\"\ngamma: 0.1\npower: 0.75\n"), 250), 0);
}

}  // namespace
}  // namespace shoal::train
