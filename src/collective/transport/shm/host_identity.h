// Which ranks share a host, as far as shared memory is concerned.
//
// Two ranks can exchange through a shared segment when they run on one kernel and
// can reach each other's abstract Unix sockets, i.e. share a network namespace.
// HostIdentity() is "<boot id>/<network namespace inode>", plus "/<assigned>" when
// the caller assigns a host name of its own (tests that simulate several hosts on
// one machine, or an operator who wants TCP between groups): an assigned name can
// only split a host, never join two.
// Thread-safety: reentrant.
#pragma once

#include <string>

namespace shoal::collective::transport::shm {

std::string HostIdentity(const std::string& assigned = "");

}  // namespace shoal::collective::transport::shm
