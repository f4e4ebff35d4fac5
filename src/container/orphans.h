// Orphans: processes a task's programs started and left behind in a session of their own
// (`setsid daemon &`, a double fork). Neither the programs' process groups nor an
// environment marker reach them (`env -i` clears the marker), so they would outlive the
// task. The agent makes itself a child subreaper: the kernel hands it every such orphan as
// a child, and when the programs end it ends them too.
//
// Contract:
//  - AdoptOrphans() makes the calling process a child subreaper (PR_SET_CHILD_SUBREAPER):
//    a descendant whose parent dies becomes its child, not init's. Call it before the
//    programs start; false where the kernel refuses (it never does on Linux 3.4+).
//  - EndAdoptedOrphans(keep, timeout_ms) sends SIGKILL to every child of the caller but
//    those in `keep` (children it started itself and ends on its own, such as a board),
//    and to all each started, reaps them, and repeats as their own orphans arrive, until
//    no other child is left or timeout_ms passed. It returns the command lines of the ones
//    it ended, for the task's log. Call it once the caller waits for no other child.
// Thread-safety: EndAdoptedOrphans reaps the caller's children: no other thread may be
// waiting for one meanwhile.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace shoal {

bool AdoptOrphans();

std::vector<std::string> EndAdoptedOrphans(const std::vector<pid_t>& keep = {}, int timeout_ms = 3000);

}  // namespace shoal
