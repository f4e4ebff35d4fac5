#include "storage/s3/s3_xml.h"

#include <tinyxml2.h>

#include <cstdlib>

namespace shoal::storage {
namespace {

using tinyxml2::XMLDocument;
using tinyxml2::XMLElement;

std::string TextOf(const XMLElement* parent, const char* name) {
  if (!parent) return "";
  const XMLElement* e = parent->FirstChildElement(name);
  if (!e || !e->GetText()) return "";
  return e->GetText();
}

Result<const XMLElement*> Root(XMLDocument& doc, const std::string& xml, const char* expected) {
  if (doc.Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS) {
    return Internal(std::string("the S3 service's reply is not valid XML (expected ") + expected + ")");
  }
  const XMLElement* root = doc.RootElement();
  if (!root || std::string(root->Name()) != expected) {
    return Internal(std::string("the S3 service's reply is not a ") + expected);
  }
  return root;
}

}  // namespace

Result<S3ListPage> ParseListObjectsV2(const std::string& xml) {
  XMLDocument doc;
  ASSIGN_OR_RETURN(const XMLElement* root, Root(doc, xml, "ListBucketResult"));
  S3ListPage page;
  for (const XMLElement* c = root->FirstChildElement("Contents"); c; c = c->NextSiblingElement("Contents")) {
    S3ListEntry entry;
    entry.key = TextOf(c, "Key");
    std::string size = TextOf(c, "Size");
    entry.size = size.empty() ? 0 : std::strtoll(size.c_str(), nullptr, 10);
    if (entry.size < 0) entry.size = 0;
    if (!entry.key.empty()) page.entries.push_back(std::move(entry));
  }
  page.truncated = TextOf(root, "IsTruncated") == "true";
  page.next_token = TextOf(root, "NextContinuationToken");
  if (page.truncated && page.next_token.empty()) {
    return Internal("the S3 service's listing is truncated but has no NextContinuationToken");
  }
  return page;
}

Result<S3UploadsPage> ParseListMultipartUploads(const std::string& xml) {
  XMLDocument doc;
  ASSIGN_OR_RETURN(const XMLElement* root, Root(doc, xml, "ListMultipartUploadsResult"));
  S3UploadsPage page;
  for (const XMLElement* u = root->FirstChildElement("Upload"); u; u = u->NextSiblingElement("Upload")) {
    std::string key = TextOf(u, "Key");
    std::string id = TextOf(u, "UploadId");
    if (!key.empty() && !id.empty()) page.uploads.emplace_back(std::move(key), std::move(id));
  }
  page.truncated = TextOf(root, "IsTruncated") == "true";
  page.next_key_marker = TextOf(root, "NextKeyMarker");
  page.next_upload_id_marker = TextOf(root, "NextUploadIdMarker");
  if (page.truncated && page.next_key_marker.empty()) {
    return Internal("the S3 service's list of uploads is truncated but has no NextKeyMarker");
  }
  return page;
}

Result<std::string> ParseUploadId(const std::string& xml) {
  XMLDocument doc;
  ASSIGN_OR_RETURN(const XMLElement* root, Root(doc, xml, "InitiateMultipartUploadResult"));
  std::string id = TextOf(root, "UploadId");
  if (id.empty()) return Internal("the S3 service's InitiateMultipartUploadResult has no UploadId");
  return id;
}

S3Error ParseS3Error(const std::string& xml) {
  XMLDocument doc;
  if (doc.Parse(xml.data(), xml.size()) != tinyxml2::XML_SUCCESS) return {};
  const XMLElement* root = doc.RootElement();
  if (!root || std::string(root->Name()) != "Error") return {};
  return {TextOf(root, "Code"), TextOf(root, "Message")};
}

}  // namespace shoal::storage
