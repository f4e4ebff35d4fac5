// Prototxt: Caffe's net and solver definitions, read with protobuf's text format into
// Shoal's schema (caffe.proto, Caffe's names and numbers).
//
// Contract:
//  - Parse*Text never throws and never ignores input: a syntax error, an unknown field, an
//    unknown enum value, a layer type `shoal train` does not implement, a *_param block
//    that does not belong to the layer's type, or a value the trainer does not support
//    (STOCHASTIC pooling, LEVELDB, L1 regularization, ...) is kInvalidArgument with
//    "<file>:<line>: <what>", naming the field or layer.
//  - Load* read a local file (path or file:// URI) and parse it.
//  - NetForState keeps the layers whose include/exclude rules admit the state (phase,
//    level, stages); NetForPhase is NetForState with the phase alone.
//  - ParseNetText reports every problem of a file in one status, one per line.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "train/caffe.pb.h"

namespace shoal::train {

// Layer types `shoal train` implements, in the order docs/train.md lists them.
const std::vector<std::string>& SupportedLayerTypes();
// Solver types and learning-rate policies it implements.
const std::vector<std::string>& SupportedSolverTypes();
const std::vector<std::string>& SupportedLrPolicies();

Result<caffe::NetParameter> ParseNetText(const std::string& text, const std::string& filename);
Result<caffe::SolverParameter> ParseSolverText(const std::string& text, const std::string& filename);

Result<caffe::NetParameter> LoadNet(const std::string& path);
Result<caffe::SolverParameter> LoadSolver(const std::string& path);

// The net file a solver names: `net` as given when it exists, else relative to the
// directory of the solver file. kInvalidArgument when the solver names no net.
Result<std::string> ResolveNetPath(const caffe::SolverParameter& solver, const std::string& solver_path);

// Caffe's NetStateRule: phase, min_level/max_level, stage and not_stage.
bool StateMeetsRule(const caffe::NetState& state, const caffe::NetStateRule& rule);
// The layers a net in `state` has: with include rules, those whose rules one is met; with
// exclude rules, those none of whose rules is met; without rules, every layer.
caffe::NetParameter NetForState(const caffe::NetParameter& net, const caffe::NetState& state);
caffe::NetParameter NetForPhase(const caffe::NetParameter& net, caffe::Phase phase);

}  // namespace shoal::train
