// Progress lines: XLearning's `reporter progress:<float>` printed by a user program on
// stderr sets its task's progress.
//
// Contract: ParseProgressLine accepts the line with optional surrounding whitespace and a
// trailing '\r'; the value must be a finite number in [0, 1] (a percentage such as 42 is
// refused, not guessed). Anything else returns nullopt: the line is just a log line.
// Thread-safety: pure function.
#pragma once

#include <optional>
#include <string_view>

namespace shoal {

std::optional<double> ParseProgressLine(std::string_view line);

}  // namespace shoal
