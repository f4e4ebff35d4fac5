// The environment variables through which a task's program finds its data (docs/data.md):
// one naming rule for the agent that sets them (data/task_data.h) and for the spec parser,
// which refuses two inputs (or two outputs) whose names would set the same variable.
//
// Contract: names are upper-cased, so `train` and `TRAIN` both give SHOAL_INPUT_TRAIN.
//  - a download input sets SHOAL_INPUT_<NAME>_DIR;
//  - a placeholder input SHOAL_INPUT_<NAME> and SHOAL_INPUT_<NAME>_FILE;
//  - a stream input none (it is the program's stdin);
//  - an output SHOAL_OUTPUT_<NAME>_DIR.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "protocol/states.h"

namespace shoal {

// SHOAL_INPUT_<NAME>: the stem of an input's variables.
std::string InputVariable(const std::string& input_name);
// Every variable an input of this mode sets.
std::vector<std::string> InputVariables(const std::string& input_name, InputMode mode);
// SHOAL_OUTPUT_<NAME>_DIR.
std::string OutputFolderVariable(const std::string& output_name);

}  // namespace shoal
