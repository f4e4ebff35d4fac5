#include "collective/ring.h"

#include <algorithm>

#include "collective/reduce.h"

namespace shoal::collective {

std::vector<size_t> BalancedOffsets(size_t count, int parts) {
  std::vector<size_t> out(parts + 1);
  for (int i = 0; i <= parts; ++i) out[i] = count * i / parts;
  return out;
}

std::vector<size_t> EqualOffsets(size_t count, int parts) {
  std::vector<size_t> out(parts + 1);
  for (int i = 0; i <= parts; ++i) out[i] = count * i;
  return out;
}

namespace {

int Mod(int a, int n) { return ((a % n) + n) % n; }

constexpr size_t kMinChunkBytes = 256 << 10;

// The schedule of one rank: which segment each step sends and receives.
class RingSchedule {
 public:
  RingSchedule(const RingPlan& plan, int rank, int size, size_t chunk_elems)
      : plan_(plan), rank_(rank), size_(size), chunk_elems_(chunk_elems) {
    reduce_steps_ = plan.reduce_scatter ? size - 1 : 0;
    steps_ = reduce_steps_ + (plan.allgather ? size - 1 : 0);
    size_t longest = 0;
    for (int k = 0; k < size; ++k) longest = std::max(longest, plan.offsets[k + 1] - plan.offsets[k]);
    chunks_ = std::max<size_t>(1, (longest + chunk_elems - 1) / chunk_elems);
  }

  int steps() const { return steps_; }
  int reduce_steps() const { return reduce_steps_; }
  size_t chunks() const { return chunks_; }
  bool reduces(int step) const { return step < reduce_steps_; }
  bool completes_reduction(int step) const { return step == reduce_steps_ - 1; }

  // Segment received in `step`; step -1 names the segment the first step sends.
  int RecvSegment(int step) const {
    int base = rank_ + plan_.shift;
    const bool reducing = reduce_steps_ > 0 && step < reduce_steps_;
    return reducing ? Mod(base - step - 1, size_) : Mod(base - (step - reduce_steps_), size_);
  }
  int SendSegment(int step) const { return RecvSegment(step - 1); }

  // Element range [*begin, *end) of chunk `c` of segment `seg`.
  void Chunk(int seg, size_t c, size_t* begin, size_t* end) const {
    size_t seg_begin = plan_.offsets[seg], seg_end = plan_.offsets[seg + 1];
    *begin = std::min(seg_end, seg_begin + c * chunk_elems_);
    *end = std::min(seg_end, *begin + chunk_elems_);
  }

 private:
  const RingPlan& plan_;
  const int rank_, size_;
  const size_t chunk_elems_;
  int reduce_steps_ = 0, steps_ = 0;
  size_t chunks_ = 1;
};

}  // namespace

Status RunRing(Communicator& comm, const RingPlan& plan) {
  const int n = plan.members.empty() ? comm.size() : static_cast<int>(plan.members.size());
  if (n == 1) return Status::Ok();
  const int position = plan.members.empty()
                           ? comm.rank()
                           : static_cast<int>(std::find(plan.members.begin(), plan.members.end(), comm.rank()) -
                                              plan.members.begin());
  auto member = [&](int p) { return plan.members.empty() ? Mod(p, n) : plan.members[Mod(p, n)]; };
  const size_t elem = ElementSize(plan.type);
  // Chunks: at least ~4 per segment so the pipeline has something to overlap, at
  // least kMinChunkBytes so per-chunk overhead stays small, at most chunk_bytes.
  size_t longest = 0;
  for (int k = 0; k < n; ++k) longest = std::max(longest, plan.offsets[k + 1] - plan.offsets[k]);
  const size_t chunk_bytes = std::min(comm.options().chunk_bytes, std::max(kMinChunkBytes, longest * elem / 4));
  const size_t chunk_elems = std::max<size_t>(1, chunk_bytes / elem);
  const RingSchedule ring(plan, position, n, chunk_elems);
  const int right = member(position + 1), left = member(position - 1);
  const size_t depth = static_cast<size_t>(comm.options().pipeline_depth);
  char* tmp = comm.Scratch(0, depth * chunk_elems * elem);
  const size_t units = static_cast<size_t>(ring.steps()) * ring.chunks();

  auto post_send = [&](int step, size_t c) {
    size_t b, e;
    ring.Chunk(ring.SendSegment(step), c, &b, &e);
    comm.PostSend(right, plan.data + b * elem, (e - b) * elem);
  };
  // Unit u is chunk u % chunks of step u / chunks; reduce units land in a tmp slot.
  std::vector<transport::Request> recvs(units);
  auto post_recv = [&](size_t u) {
    int step = static_cast<int>(u / ring.chunks());
    size_t b, e;
    ring.Chunk(ring.RecvSegment(step), u % ring.chunks(), &b, &e);
    char* dst = ring.reduces(step) ? tmp + (u % depth) * chunk_elems * elem : plan.data + b * elem;
    recvs[u] = comm.PostRecv(left, dst, (e - b) * elem);
  };

  // Receives are posted in unit order (the order the left neighbour sends). A
  // reduce-scatter unit needs a free tmp slot: at most `depth` of them are ahead of
  // the unit being reduced. Allgather units land in the buffer itself and are all
  // posted as soon as the reduce-scatter ones are, so incoming data never waits in
  // the kernel for a receive to be posted.
  const size_t reduce_units = static_cast<size_t>(ring.reduce_steps()) * ring.chunks();
  size_t next_recv = 0;
  auto post_recvs = [&](size_t reduced) {  // `reduced` units no longer need their slots
    while (next_recv < units && (next_recv >= reduce_units || next_recv < reduced + depth)) post_recv(next_recv++);
  };

  for (size_t c = 0; c < ring.chunks(); ++c) post_send(0, c);
  post_recvs(0);
  for (size_t u = 0; u < units; ++u) {
    const int step = static_cast<int>(u / ring.chunks());
    const size_t c = u % ring.chunks();
    RETURN_IF_ERROR(comm.Wait(recvs[u]));
    if (ring.reduces(step)) {
      size_t b, e;
      ring.Chunk(ring.RecvSegment(step), c, &b, &e);
      Reduce(plan.type, plan.op, plan.data + b * elem, tmp + (u % depth) * chunk_elems * elem, e - b);
      if (plan.op == ReduceOp::kAverage && ring.completes_reduction(step)) Scale(plan.type, plan.data + b * elem, e - b, n);
      post_recvs(u + 1);  // this unit's tmp slot is free again
    }
    if (step + 1 < ring.steps()) post_send(step + 1, c);
  }
  return Status::Ok();
}

}  // namespace shoal::collective
