#include "bench/scale/launch_pipe.h"

#include <errno.h>
#include <unistd.h>

#include <sstream>

namespace shoal::bench {

std::vector<std::string> ParseLaunchLine(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

bool WriteLine(int fd, const std::string& line) {
  std::string whole = line + "\n";
  for (size_t done = 0; done < whole.size();) {
    ssize_t n = write(fd, whole.data() + done, whole.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void ReadLines(int fd, const std::function<void(const std::string&)>& line) {
  std::string buffer;
  char chunk[65536];
  while (true) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    buffer.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t end; (end = buffer.find('\n', start)) != std::string::npos; start = end + 1) {
      line(buffer.substr(start, end - start));
    }
    buffer.erase(0, start);
  }
}

}  // namespace shoal::bench
