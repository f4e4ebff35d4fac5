#include "protocol/api_messages.h"

#include "protocol/field_reader.h"

namespace shoal::protocol {

Json Encode(const SubmitRequest& m) {
  return Json{{"spec", m.spec},         {"overrides", m.overrides},       {"source_name", m.source_name},
              {"base_dir", m.base_dir}, {"default_name", m.default_name}, {"user", m.user}};
}

template <>
Result<SubmitRequest> Decode<SubmitRequest>(const Json& json) {
  FieldReader r(json, "submit");
  SubmitRequest m;
  const Json* spec = r.Raw("spec");
  if (!spec || spec->is_null()) {
    if (r.ok()) r.Fail("spec", "is missing: the job spec as YAML text or an object");
  } else if (spec->is_string()) {
    m.spec = spec->get<std::string>();
  } else if (spec->is_object()) {
    m.spec = spec->dump(-1, ' ', false, Json::error_handler_t::replace);
  } else {
    r.Fail("spec", "must be the job spec as YAML text or an object");
  }
  m.overrides = r.StringList("overrides");
  m.source_name = r.String("source_name", m.source_name);
  m.base_dir = r.String("base_dir", m.base_dir);
  m.default_name = r.String("default_name", m.default_name);
  m.user = r.String("user");
  if (!r.ok()) return r.status();
  return m;
}

}  // namespace shoal::protocol
