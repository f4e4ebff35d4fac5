#include "spec/data_variables.h"

#include <cctype>

namespace shoal {
namespace {

std::string Upper(const std::string& name) {
  std::string out;
  for (char c : name) out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return out;
}

}  // namespace

std::string InputVariable(const std::string& input_name) { return "SHOAL_INPUT_" + Upper(input_name); }

std::vector<std::string> InputVariables(const std::string& input_name, InputMode mode) {
  switch (mode) {
    case InputMode::kDownload: return {InputVariable(input_name) + "_DIR"};
    case InputMode::kPlaceholder: return {InputVariable(input_name), InputVariable(input_name) + "_FILE"};
    case InputMode::kStream: return {};
  }
  return {};
}

std::string OutputFolderVariable(const std::string& output_name) { return "SHOAL_OUTPUT_" + Upper(output_name) + "_DIR"; }

}  // namespace shoal
