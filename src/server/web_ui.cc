#include "server/web_ui.h"

#include <map>
#include <string>

namespace shoal {
namespace {

constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

void Serve(const WebAsset& asset, const httplib::Request& req, httplib::Response& res) {
  res.set_header("Content-Security-Policy", kContentSecurityPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("Cache-Control", "no-cache");
  res.set_header("ETag", asset.etag);
  if (req.get_header_value("If-None-Match") == asset.etag) {
    res.status = 304;
    return;
  }
  res.set_content(reinterpret_cast<const char*>(asset.data), asset.size, asset.content_type);
}

}  // namespace

void InstallWebUi(httplib::Server& http, std::span<const WebAsset> assets) {
  auto files = std::make_shared<std::map<std::string, const WebAsset*>>();
  for (const WebAsset& asset : assets) (*files)[asset.path] = &asset;
  auto index = files->find("/index.html");
  if (index == files->end()) return;  // a build without the UI serves the API alone
  const WebAsset* page = index->second;
  auto serve_page = [page](const httplib::Request& req, httplib::Response& res) { Serve(*page, req, res); };
  http.Get("/", serve_page);
  http.Get(R"(/jobs/[^/]+)", serve_page);
  http.Get(R"(/static/([A-Za-z0-9_.-]+))", [files](const httplib::Request& req, httplib::Response& res) {
    auto it = files->find("/static/" + std::string(req.matches[1]));
    if (it == files->end()) {
      res.status = 404;  // the error handler writes the body
      return;
    }
    Serve(*it->second, req, res);
  });
}

}  // namespace shoal
