// What runs around every request of `shoal server`: the token check (server_auth.h)
// before routing, and the latency measurement (request_metrics.h) after the reply.
//
// Contract:
//  - A request that needs a token (ServerAuth::Requires) and lacks a valid one gets 401
//    with an error body telling where tokens come from; one addressed to a foreign Host
//    on a loopback server (ServerAuth::AcceptsHost) without a valid token gets 403
//    naming the Host. Nothing else of either runs.
//  - Request bodies above 64 MiB get 413. Replies go out without Nagle's delay.
//  - Every request, refused or not, is measured.
// Thread-safety: the hooks run on the server's worker threads; auth is immutable and
// RequestMetrics is thread-safe. Both must outlive the server.
#pragma once

#include <httplib.h>

#include "server/request_metrics.h"
#include "server/server_auth.h"

namespace shoal {

void InstallServerHooks(httplib::Server& http, const ServerAuth& auth, RequestMetrics& metrics,
                        const std::string& token_path);

}  // namespace shoal
