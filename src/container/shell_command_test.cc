#include "container/shell_command.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(ShellCommand, OneSimpleCommandBecomesTheShellItself) {
  EXPECT_EQ(ShellCommand("/usr/bin/python3 train.py --lr 0.1"), "exec /usr/bin/python3 train.py --lr 0.1");
  EXPECT_EQ(ShellCommand("python3 -m http.server $SHOAL_BOARD_PORT"), "exec python3 -m http.server $SHOAL_BOARD_PORT");
  EXPECT_EQ(ShellCommand("  sleep 60"), "exec   sleep 60");
  EXPECT_EQ(ShellCommand("echo 'a b'"), "exec echo 'a b'");
}

TEST(ShellCommand, AnythingElseRunsAsWritten) {
  for (const char* command : {"cd src && python3 train.py", "python3 a.py; python3 b.py", "python3 a.py | tee log",
                              "python3 a.py > out.txt", "(sleep 1)", "echo `date`", "echo $(date)", "a\nb",
                              "python3 a.py &", "if true; then echo; fi", "for i in 1 2; do echo $i; done",
                              "exit 3", "cd /tmp", "export A=1", ". ./env.sh", "A=1 python3 a.py", "", "   ",
                              "exec python3 a.py", "# a comment", "wait", "ulimit -n 1024", "while :", "time python3 a.py"}) {
    EXPECT_EQ(ShellCommand(command), command) << command;
  }
}

}  // namespace
}  // namespace shoal
