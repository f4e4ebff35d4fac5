// The web UI's files, embedded in the binary at build time (web/embed_assets.cmake turns
// web/index.html, web/src/* and uPlot's dist files into web_assets.cc), served by
// `shoal server` on the API's port.
//
// Contract:
//  - GET / and GET /jobs/<id> answer index.html (the page routes itself); GET
//    /static/<file> answers that file; anything else is not the UI's.
//  - Every answer carries a strict Content-Security-Policy (scripts and styles only
//    from the server, no inline script, no plugins, no framing), nosniff, no-referrer,
//    and an ETag; a matching If-None-Match gets 304.
// Thread-safety: the assets are immutable; handlers may run on any thread.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <span>

namespace shoal {

struct WebAsset {
  const char* path;          // "/index.html", "/static/app.js"
  const char* content_type;
  const unsigned char* data;
  size_t size;
  const char* etag;          // a quoted content hash
};

// The files compiled into this binary (generated web_assets.cc).
std::span<const WebAsset> EmbeddedWebAssets();

void InstallWebUi(httplib::Server& http, std::span<const WebAsset> assets);

}  // namespace shoal
