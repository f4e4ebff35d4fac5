// Saved models of an attempt: the Save Model button's requests and what the AM reports
// about them. Uploading the model is the data-management work's (docs/api.md); here a
// request is recorded, handed to the AM in the report reply, and its state kept.
//
// Contract:
//  - Entries are protocol::SavedModelView; a new request is named by its UTC time
//    "YYYYMMDD-HHMMSS" (with "-2", "-3"... when one second holds several) and starts in
//    state "requested".
//  - ApplySavedModelUpdate changes the entry of that name, or adds one the AM saved on
//    its own.
//  - PendingSaveRequests lists the entries still "requested": what the AM must act on.
// Thread-safety: pure functions over values.
#pragma once

#include <cstdint>
#include <vector>

#include "protocol/attempt_messages.h"
#include "protocol/job_views.h"
#include "protocol/task_messages.h"

namespace shoal {

using SavedModels = std::vector<protocol::SavedModelView>;

protocol::SavedModelView NewSaveRequest(const SavedModels& entries, int64_t now_ms);
void ApplySavedModelUpdate(SavedModels& entries, const protocol::SavedModelUpdate& update, int64_t now_ms);
std::vector<protocol::SaveRequest> PendingSaveRequests(const SavedModels& entries);

}  // namespace shoal
