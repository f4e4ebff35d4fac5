#include "train/solver_type.h"

#include <gtest/gtest.h>

#include "train/prototxt.h"

namespace shoal::train {
namespace {

const char kBase[] = "net: \"n.prototxt\" base_lr: 0.1 max_iter: 10\n";

TEST(SolverType, TheOldEnumBecomesTheType) {
  const std::pair<const char*, const char*> cases[] = {{"SGD", "SGD"},         {"NESTEROV", "Nesterov"},
                                                       {"ADAGRAD", "AdaGrad"}, {"RMSPROP", "RMSProp"},
                                                       {"ADADELTA", "AdaDelta"}, {"ADAM", "Adam"}};
  for (const auto& [old_name, type] : cases) {
    auto solver = ParseSolverText(std::string(kBase) + "solver_type: " + old_name + "\n", "s.prototxt");
    ASSERT_TRUE(solver.ok()) << old_name << ": " << solver.status().message();
    EXPECT_EQ(solver->type(), type);
    EXPECT_FALSE(solver->has_solver_type());
  }
}

TEST(SolverType, BothFieldsOrCaffesConditionsAreRefusedWithTheirLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"type: \"SGD\"\nsolver_type: ADAM\n", "s.prototxt:4: give the solver's type once"},
      {"type: \"AdaGrad\"\nmomentum: 0.9\n", "s.prototxt:4: momentum cannot be used with AdaGrad"},
      {"solver_type: RMSPROP\nmomentum: 0.9\n", "s.prototxt:4: momentum cannot be used with RMSProp"},
      {"type: \"RMSProp\"\nrms_decay: 1\n", "s.prototxt:4: rms_decay must lie in [0, 1), not 1"},
      {"average_loss: 0\n", "s.prototxt:3: average_loss must be at least 1"},
  };
  for (const auto& [text, want] : cases) {
    auto solver = ParseSolverText(std::string(kBase) + "\n" + text, "s.prototxt");
    ASSERT_FALSE(solver.ok()) << text;
    EXPECT_NE(solver.status().message().find(want), std::string::npos) << solver.status().message();
  }
}

TEST(SolverType, NewSolversParseWithTheirFields) {
  auto solver = ParseSolverText(std::string(kBase) + "type: \"RMSProp\" rms_decay: 0.98 delta: 1e-6\n", "s.prototxt");
  ASSERT_TRUE(solver.ok()) << solver.status().message();
  EXPECT_FLOAT_EQ(solver->rms_decay(), 0.98f);
  EXPECT_FLOAT_EQ(ParseSolverText(kBase, "s.prototxt")->rms_decay(), 0.99f);  // Caffe's default
  for (const char* type : {"AdaGrad", "AdaDelta"}) {
    EXPECT_TRUE(ParseSolverText(std::string(kBase) + "type: \"" + type + "\"\n", "s.prototxt").ok()) << type;
  }
}

}  // namespace
}  // namespace shoal::train
