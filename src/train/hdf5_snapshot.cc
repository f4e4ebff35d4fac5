#include "train/hdf5_snapshot.h"

#include <hdf5.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

namespace shoal::train {
namespace {

// Closes an HDF5 handle of any kind when it goes out of scope.
class Handle {
 public:
  explicit Handle(hid_t id = -1) : id_(id) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() {
    if (id_ >= 0) H5Idec_ref(id_);
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
};

// HDF5 prints its error stack to stderr by default; Shoal reports its own errors.
class QuietErrors {
 public:
  QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// Each in-memory file needs a name of its own while it is open.
std::string MemoryName() {
  static std::atomic<uint64_t> counter{0};
  return "shoal-memory-" + std::to_string(counter++) + ".h5";
}

hid_t CreateInMemory() {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (!fapl.ok() || H5Pset_fapl_core(fapl.get(), 1 << 20, 0) < 0) return -1;
  return H5Fcreate(MemoryName().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
}

hid_t OpenInMemory(const std::string& bytes) {
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (!fapl.ok() || H5Pset_fapl_core(fapl.get(), 1 << 20, 0) < 0) return -1;
  if (H5Pset_file_image(fapl.get(), const_cast<char*>(bytes.data()), bytes.size()) < 0) return -1;
  return H5Fopen(MemoryName().c_str(), H5F_ACC_RDONLY, fapl.get());
}

Result<std::string> ImageOf(hid_t file) {
  if (H5Fflush(file, H5F_SCOPE_GLOBAL) < 0) return Internal("HDF5: cannot flush the snapshot");
  ssize_t n = H5Fget_file_image(file, nullptr, 0);
  if (n <= 0) return Internal("HDF5: cannot read the snapshot's image");
  std::string out(static_cast<size_t>(n), '\0');
  if (H5Fget_file_image(file, out.data(), out.size()) != n) return Internal("HDF5: cannot read the snapshot's image");
  return out;
}

Status WriteFloats(hid_t loc, const std::string& name, const caffe::BlobProto& blob) {
  std::vector<hsize_t> dims;
  for (int64_t d : blob.shape().dim()) dims.push_back(static_cast<hsize_t>(d));
  if (dims.empty()) dims.push_back(static_cast<hsize_t>(blob.data_size()));
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  Handle set(H5Dcreate2(loc, name.c_str(), H5T_NATIVE_FLOAT, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!set.ok() || H5Dwrite(set.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, blob.data().data()) < 0) {
    return Internal("HDF5: cannot write dataset " + name);
  }
  return Status::Ok();
}

Result<caffe::BlobProto> ReadFloats(hid_t loc, const std::string& name) {
  Handle set(H5Dopen2(loc, name.c_str(), H5P_DEFAULT));
  if (!set.ok()) return InvalidArgument("has no dataset " + name);
  Handle space(H5Dget_space(set.get()));
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > 32) return InvalidArgument("dataset " + name + " has no usable shape");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  caffe::BlobProto blob;
  hsize_t count = 1;
  for (hsize_t d : dims) {
    blob.mutable_shape()->add_dim(static_cast<int64_t>(d));
    count *= d;
  }
  if (count > (hsize_t{1} << 34)) return InvalidArgument("dataset " + name + " is implausibly large");
  blob.mutable_data()->Resize(static_cast<int>(count), 0.0f);
  if (count > 0 && H5Dread(set.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, blob.mutable_data()->mutable_data()) < 0) {
    return InvalidArgument("dataset " + name + " does not hold numbers");
  }
  return blob;
}

Status WriteInt(hid_t loc, const char* name, int64_t value) {
  Handle space(H5Screate(H5S_SCALAR));
  int v = static_cast<int>(value);  // Caffe's hdf5_save_int: a native int
  Handle set(H5Dcreate2(loc, name, H5T_NATIVE_INT, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!set.ok() || H5Dwrite(set.get(), H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v) < 0) {
    return Internal(std::string("HDF5: cannot write ") + name);
  }
  return Status::Ok();
}

Result<int64_t> ReadInt(hid_t loc, const char* name) {
  Handle set(H5Dopen2(loc, name, H5P_DEFAULT));
  if (!set.ok()) return InvalidArgument(std::string("has no dataset ") + name);
  Handle space(H5Dget_space(set.get()));
  if (H5Sget_simple_extent_npoints(space.get()) != 1) return InvalidArgument(std::string("dataset ") + name + " is not one number");
  int64_t v = 0;
  if (H5Dread(set.get(), H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v) < 0) {
    return InvalidArgument(std::string("dataset ") + name + " is not a number");
  }
  return v;
}

// Caffe's hdf5_save_string: a fixed-length, NUL-terminated C string.
Status WriteString(hid_t loc, const char* name, const std::string& value) {
  Handle type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type.get(), value.size() + 1);
  H5Tset_strpad(type.get(), H5T_STR_NULLTERM);
  Handle space(H5Screate(H5S_SCALAR));
  Handle set(H5Dcreate2(loc, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  if (!set.ok() || H5Dwrite(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, value.c_str()) < 0) {
    return Internal(std::string("HDF5: cannot write ") + name);
  }
  return Status::Ok();
}

Result<std::string> ReadString(hid_t loc, const char* name) {
  Handle set(H5Dopen2(loc, name, H5P_DEFAULT));
  if (!set.ok()) return InvalidArgument(std::string("has no dataset ") + name);
  Handle type(H5Dget_type(set.get()));
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0) {
    return InvalidArgument(std::string("dataset ") + name + " is not a fixed-length string");
  }
  size_t size = H5Tget_size(type.get());
  if (size == 0 || size > (1u << 20)) return InvalidArgument(std::string("dataset ") + name + " is not a usable string");
  std::string out(size, '\0');
  if (H5Dread(set.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0) {
    return InvalidArgument(std::string("dataset ") + name + " cannot be read");
  }
  out.resize(std::strlen(out.c_str()));
  return out;
}

bool Exists(hid_t loc, const std::string& name) { return H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0; }

herr_t CollectName(hid_t, const char* name, const H5L_info_t*, void* out) {
  static_cast<std::vector<std::string>*>(out)->push_back(name);
  return 0;
}

}  // namespace

bool IsHdf5(const std::string& bytes) { return bytes.size() >= 8 && bytes.compare(0, 8, "\x89HDF\r\n\x1a\n") == 0; }

Result<std::string> ModelToHdf5(const caffe::NetParameter& model) {
  QuietErrors quiet;
  Handle file(CreateInMemory());
  if (!file.ok()) return Internal("HDF5: cannot create a snapshot in memory");
  Handle data(H5Gcreate2(file.get(), "data", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  for (const auto& layer : model.layer()) {
    if (layer.name().find('/') != std::string::npos || layer.name().empty() || layer.name() == ".") {
      return InvalidArgument("layer '" + layer.name() + "' cannot be a group of an HDF5 snapshot (Caffe's layout names a group per layer); "
                             "use snapshot_format: BINARYPROTO or rename the layer");
    }
    if (Exists(data.get(), layer.name())) continue;  // a second layer of the same name (another phase)
    Handle group(H5Gcreate2(data.get(), layer.name().c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (!group.ok()) return Internal("HDF5: cannot create group " + layer.name());
    for (int j = 0; j < layer.blobs_size(); ++j) {
      const auto& blob = layer.blobs(j);
      if (blob.data_size() == 0 && !blob.has_shape()) continue;  // a shared blob: its owner's group holds it
      RETURN_IF_ERROR(WriteFloats(group.get(), std::to_string(j), blob));
    }
  }
  return ImageOf(file.get());
}

Result<caffe::NetParameter> ModelFromHdf5(const std::string& bytes) {
  QuietErrors quiet;
  Handle file(OpenInMemory(bytes));
  if (!file.ok()) return InvalidArgument("is not an HDF5 file");
  Handle data(H5Gopen2(file.get(), "data", H5P_DEFAULT));
  if (!data.ok()) return InvalidArgument("has no group 'data' (is it a Caffe .caffemodel.h5?)");
  std::vector<std::string> names;
  H5Literate(data.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, CollectName, &names);
  caffe::NetParameter model;
  for (const auto& name : names) {
    Handle group(H5Gopen2(data.get(), name.c_str(), H5P_DEFAULT));
    if (!group.ok()) continue;
    caffe::LayerParameter* layer = model.add_layer();
    layer->set_name(name);
    // Datasets "0", "1", ...; Caffe leaves out shared blobs, so an index may be missing:
    // it stays an empty placeholder.
    std::vector<std::string> sets;
    H5Literate(group.get(), H5_INDEX_NAME, H5_ITER_INC, nullptr, CollectName, &sets);
    int count = 0;
    for (const auto& set : sets) {
      if (set.empty() || set.size() > 4 || set.find_first_not_of("0123456789") != std::string::npos) {
        return InvalidArgument("layer '" + name + "' holds '" + set + "', not a blob index");
      }
      count = std::max(count, std::stoi(set) + 1);
    }
    for (int j = 0; j < count; ++j) {
      caffe::BlobProto* out = layer->add_blobs();
      if (!Exists(group.get(), std::to_string(j))) continue;
      auto blob = ReadFloats(group.get(), std::to_string(j));
      if (!blob.ok()) return blob.status().WithContext("layer '" + name + "'");
      *out = std::move(blob).value();
    }
  }
  return model;
}

Result<std::string> SolverStateToHdf5(const caffe::SolverState& state) {
  QuietErrors quiet;
  Handle file(CreateInMemory());
  if (!file.ok()) return Internal("HDF5: cannot create a snapshot in memory");
  RETURN_IF_ERROR(WriteInt(file.get(), "iter", state.iter()));
  RETURN_IF_ERROR(WriteString(file.get(), "learned_net", state.learned_net()));
  RETURN_IF_ERROR(WriteInt(file.get(), "current_step", state.current_step()));
  Handle history(H5Gcreate2(file.get(), "history", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  for (int i = 0; i < state.history_size(); ++i) RETURN_IF_ERROR(WriteFloats(history.get(), std::to_string(i), state.history(i)));
  if (state.has_shoal_position()) {
    std::string position = state.shoal_position().SerializeAsString();
    hsize_t n = position.size();
    Handle space(H5Screate_simple(1, &n, nullptr));
    Handle set(H5Dcreate2(file.get(), "shoal_position", H5T_NATIVE_UCHAR, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (!set.ok() || (n > 0 && H5Dwrite(set.get(), H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, position.data()) < 0)) {
      return Internal("HDF5: cannot write shoal_position");
    }
  }
  return ImageOf(file.get());
}

Result<caffe::SolverState> SolverStateFromHdf5(const std::string& bytes) {
  QuietErrors quiet;
  Handle file(OpenInMemory(bytes));
  if (!file.ok()) return InvalidArgument("is not an HDF5 file");
  caffe::SolverState state;
  ASSIGN_OR_RETURN(int64_t iter, ReadInt(file.get(), "iter"));
  state.set_iter(static_cast<int>(iter));
  if (Exists(file.get(), "learned_net")) {
    ASSIGN_OR_RETURN(std::string net, ReadString(file.get(), "learned_net"));
    state.set_learned_net(net);
  }
  if (Exists(file.get(), "current_step")) {
    ASSIGN_OR_RETURN(int64_t step, ReadInt(file.get(), "current_step"));
    state.set_current_step(static_cast<int>(step));
  }
  Handle history(H5Gopen2(file.get(), "history", H5P_DEFAULT));
  if (!history.ok()) return InvalidArgument("has no group 'history' (is it a Caffe .solverstate.h5?)");
  for (int i = 0; Exists(history.get(), std::to_string(i)); ++i) {
    ASSIGN_OR_RETURN(caffe::BlobProto blob, ReadFloats(history.get(), std::to_string(i)));
    *state.add_history() = std::move(blob);
  }
  if (Exists(file.get(), "shoal_position")) {
    Handle set(H5Dopen2(file.get(), "shoal_position", H5P_DEFAULT));
    Handle space(H5Dget_space(set.get()));
    hssize_t n = H5Sget_simple_extent_npoints(space.get());
    if (n < 0 || n > (1 << 16)) return InvalidArgument("dataset shoal_position is not usable");
    std::string position(static_cast<size_t>(n), '\0');
    if (n > 0 && H5Dread(set.get(), H5T_NATIVE_UCHAR, H5S_ALL, H5S_ALL, H5P_DEFAULT, position.data()) < 0) {
      return InvalidArgument("dataset shoal_position cannot be read");
    }
    if (!state.mutable_shoal_position()->ParseFromString(position)) return InvalidArgument("dataset shoal_position is not Shoal's");
  }
  return state;
}

}  // namespace shoal::train
