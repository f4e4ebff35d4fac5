// Saved models of an attempt: the Save Model button's requests and what the AM reports
// about them. Uploading the model is the data-management work's (docs/api.md); here a
// request is recorded, handed to the AM in the report reply, and its state kept.
//
// Contract:
//  - Entries are JSON objects {name, requested_ms, state, uri?, message?, updated_ms?};
//    a new request is named by its UTC time "YYYYMMDD-HHMMSS" (with "-2", "-3"... when
//    one second holds several) and starts in state "requested".
//  - ApplySavedModelUpdate changes the entry of that name, or adds one the AM saved on
//    its own.
//  - PendingSaveRequests lists the entries still "requested": what the AM must act on.
// Thread-safety: pure functions over values.
#pragma once

#include <cstdint>

#include "common/json.h"
#include "protocol/task_messages.h"

namespace shoal {

Json NewSaveRequest(const Json& entries, int64_t now_ms);
void ApplySavedModelUpdate(Json& entries, const protocol::SavedModelUpdate& update, int64_t now_ms);
Json PendingSaveRequests(const Json& entries);

}  // namespace shoal
