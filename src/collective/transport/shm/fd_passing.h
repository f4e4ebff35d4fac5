// Passing a file descriptor between processes of one host over an abstract Unix
// socket (SCM_RIGHTS): what shm::Segment uses to hand its memfd to the other ranks.
//
// Contract: every call takes a deadline and returns a Status naming the step that
// failed. An abstract socket has no file: it exists while its listener is open and
// is visible only inside the listener's network namespace. A connecting process
// identifies itself with a 32-bit tag; the server checks the peer's uid (same as
// its own, or root) before it hands anything over.
// Thread-safety: reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "collective/transport/tcp/socket.h"

namespace shoal::collective::transport::shm {

// Listens on an abstract socket with a fresh random name; *name receives the name
// (without the leading NUL) for the clients.
Result<tcp::Fd> ListenAbstract(std::string* name);
// Accepts one client, reads its tag into *tag (the caller validates it) and sends it
// `fd` once `accept_tag(*tag)` says yes.
Status ServeFd(int listener, int fd, Deadline deadline, const std::function<bool(uint32_t)>& accept_tag,
               uint32_t* tag);
// Connects to the abstract socket `name`, sends `tag` and receives a descriptor.
Result<tcp::Fd> ReceiveFd(const std::string& name, uint32_t tag, Deadline deadline);

}  // namespace shoal::collective::transport::shm
