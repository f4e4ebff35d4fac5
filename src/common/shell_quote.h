// ShellQuote: one word for /bin/sh, read back exactly as given (job scripts, a command
// built from a list of arguments, files a shell sources).
//
// Contract: a word of only [A-Za-z0-9_./=:,+@%-] (and not empty) is returned as it is;
// any other is single-quoted, each ' written as '\''.
// Thread-safety: a pure function.
#pragma once

#include <string>

namespace shoal {

std::string ShellQuote(const std::string& word);

}  // namespace shoal
