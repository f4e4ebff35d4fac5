// `shoal train ...`: runs the trainer, a separate executable (shoal-train) beside the
// shoal binary, so that LibTorch is loaded only by the processes that train.
//
// Contract: TrainCommand(argc, argv) with argv[0] == "train" replaces the process with
// shoal-train and the same arguments; it returns only when that fails (exit 1, with why).
// SHOAL_TRAIN_BIN overrides where shoal-train is.
#pragma once

namespace shoal {

int TrainCommand(int argc, char** argv);

}  // namespace shoal
