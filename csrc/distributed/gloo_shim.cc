// gloo_shim.cc: the C interface to Gloo (see gloo_shim.h). The only C++ in pyctorch.
//
// Each entry point builds Gloo's options object, runs the algorithm, and turns any C++ exception
// into -1 plus its message: no exception crosses into C. Element sizes are dispatched to an
// unsigned integer type of that width, because Gloo's option setters take their element size
// from the template type; the reduction itself is the caller's C function. Collectives of empty
// tensors return at once on every rank (their sizes agree across ranks, and Gloo's algorithms
// divide by them: an empty all_gather raised SIGFPE).
#include "gloo_shim.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoallv.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/gather.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/scatter.h>
#include <gloo/transport/tcp/device.h>

namespace {

void set_err(char *err, size_t errlen, const char *msg)
{
    if (errlen) std::snprintf(err, errlen, "%s", msg);
}

// Runs f, mapping exceptions to -1 with the message.
template <typename F>
int guarded(char *err, size_t errlen, F &&f)
{
    try {
        f();
        return 0;
    } catch (const std::exception &e) {
        set_err(err, errlen, e.what());
    } catch (...) {
        set_err(err, errlen, "Gloo: unknown C++ exception");
    }
    return -1;
}

// Gloo's Store interface over the C callbacks. Holds a copy of the callback table (borrowed ctx).
class CallbackStore : public gloo::rendezvous::Store {
  public:
    explicit CallbackStore(const pct_gloo_store_cb &cb, int64_t timeout_ms) : cb_(cb), timeout_ms_(timeout_ms) {}
    void set(const std::string &key, const std::vector<char> &data) override
    {
        char err[512] = {0};
        if (cb_.set(cb_.ctx, key.c_str(), data.data(), data.size(), err, sizeof err) < 0) throw std::runtime_error(err);
    }
    std::vector<char> get(const std::string &key) override
    {
        char err[512] = {0};
        void *val = nullptr;
        size_t n = 0;
        if (cb_.get(cb_.ctx, key.c_str(), &val, &n, err, sizeof err) < 0) throw std::runtime_error(err);
        std::vector<char> out(static_cast<char *>(val), static_cast<char *>(val) + n);
        std::free(val);
        return out;
    }
    void wait(const std::vector<std::string> &keys) override { wait(keys, std::chrono::milliseconds(timeout_ms_)); }
    void wait(const std::vector<std::string> &keys, const std::chrono::milliseconds &timeout) override
    {
        std::vector<const char *> ks;
        for (const auto &k : keys) ks.push_back(k.c_str());
        char err[512] = {0};
        if (cb_.wait(cb_.ctx, ks.data(), ks.size(), timeout.count(), err, sizeof err) < 0) throw std::runtime_error(err);
    }

  private:
    pct_gloo_store_cb cb_;
    int64_t timeout_ms_;
};

// Calls f with a null pointer of the unsigned type as wide as one element.
template <typename F>
void by_width(size_t elsize, F &&f)
{
    switch (elsize) {
    case 1: f(static_cast<uint8_t *>(nullptr)); break;
    case 2: f(static_cast<uint16_t *>(nullptr)); break;
    case 4: f(static_cast<uint32_t *>(nullptr)); break;
    case 8: f(static_cast<uint64_t *>(nullptr)); break;
    default: throw std::runtime_error("Gloo shim: unsupported element size");
    }
}

std::chrono::milliseconds ms(int64_t t) { return std::chrono::milliseconds(t); }

} // namespace

// Ownership: the connected context and the TCP device it runs on, both owned (shared_ptr, as
// Gloo hands them out); pct_gloo_free releases them, which closes the pairs.
struct pct_gloo {
    std::shared_ptr<gloo::transport::Device> device;
    std::shared_ptr<gloo::rendezvous::Context> context;
};

// Ownership: the posted operation's UnboundBuffer, owned (it borrows the caller's memory, which
// must outlive it); pct_gloo_p2p_free deletes it, safe even before completion (pairs hold weak
// references to it).
struct pct_gloo_p2p {
    std::unique_ptr<gloo::transport::UnboundBuffer> buf;
    bool is_send;
};

extern "C" {

pct_gloo *pct_gloo_connect(const pct_gloo_store_cb *store, const char *hostname, const char *iface, int rank,
                           int size, int64_t timeout_ms, char *err, size_t errlen)
{
    pct_gloo *g = nullptr;
    int rc = guarded(err, errlen, [&] {
        std::unique_ptr<pct_gloo> made(new pct_gloo());
        gloo::transport::tcp::attr attr;
        if (iface && *iface)
            attr.iface = iface;
        else
            attr.hostname = hostname;
        made->device = gloo::transport::tcp::CreateDevice(attr);
        made->context = std::make_shared<gloo::rendezvous::Context>(rank, size);
        made->context->setTimeout(ms(timeout_ms));
        CallbackStore s(*store, timeout_ms);
        made->context->connectFullMesh(s, made->device);
        g = made.release();
    });
    return rc == 0 ? g : nullptr;
}

void pct_gloo_free(pct_gloo *g)
{
    delete g;
}

int pct_gloo_allreduce(pct_gloo *g, void *buf, size_t count, size_t elsize, pct_gloo_reduce_fn fn,
                       uint32_t tag, int64_t timeout_ms, char *err, size_t errlen)
{
    if (count == 0) return 0; // every rank has the same empty tensor (Gloo divides by the size)
    return guarded(err, errlen, [&] {
        gloo::AllreduceOptions opts(g->context);
        by_width(elsize, [&](auto *type) {
            using T = std::remove_pointer_t<decltype(type)>;
            opts.setOutput(static_cast<T *>(buf), count);
        });
        opts.setReduceFunction([fn](void *c, const void *a, const void *b, size_t n) { fn(c, a, b, n); });
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::allreduce(opts);
    });
}

int pct_gloo_reduce(pct_gloo *g, void *buf, size_t count, size_t elsize, pct_gloo_reduce_fn fn, int root,
                    uint32_t tag, int64_t timeout_ms, char *err, size_t errlen)
{
    if (count == 0) return 0;
    return guarded(err, errlen, [&] {
        gloo::ReduceOptions opts(g->context);
        by_width(elsize, [&](auto *type) {
            using T = std::remove_pointer_t<decltype(type)>;
            opts.setOutput(static_cast<T *>(buf), count);
        });
        opts.setReduceFunction([fn](void *c, const void *a, const void *b, size_t n) { fn(c, a, b, n); });
        opts.setRoot(root);
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::reduce(opts);
    });
}

int pct_gloo_broadcast(pct_gloo *g, void *buf, size_t nbytes, int root, uint32_t tag, int64_t timeout_ms,
                       char *err, size_t errlen)
{
    if (nbytes == 0) return 0;
    return guarded(err, errlen, [&] {
        gloo::BroadcastOptions opts(g->context);
        opts.setOutput(static_cast<uint8_t *>(buf), nbytes);
        opts.setRoot(root);
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::broadcast(opts);
    });
}

int pct_gloo_allgather(pct_gloo *g, const void *in, void *out, size_t nbytes, uint32_t tag, int64_t timeout_ms,
                       char *err, size_t errlen)
{
    if (nbytes == 0) return 0;
    return guarded(err, errlen, [&] {
        gloo::AllgatherOptions opts(g->context);
        opts.setInput(static_cast<uint8_t *>(const_cast<void *>(in)), nbytes);
        opts.setOutput(static_cast<uint8_t *>(out), nbytes * g->context->size);
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::allgather(opts);
    });
}

int pct_gloo_gather(pct_gloo *g, const void *in, void *out, size_t nbytes, int root, uint32_t tag,
                    int64_t timeout_ms, char *err, size_t errlen)
{
    if (nbytes == 0) return 0;
    return guarded(err, errlen, [&] {
        gloo::GatherOptions opts(g->context);
        opts.setInput(static_cast<uint8_t *>(const_cast<void *>(in)), nbytes);
        if (g->context->rank == root) opts.setOutput(static_cast<uint8_t *>(out), nbytes * g->context->size);
        opts.setRoot(root);
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::gather(opts);
    });
}

int pct_gloo_scatter(pct_gloo *g, void *const *ins, void *out, size_t nbytes, int root, uint32_t tag,
                     int64_t timeout_ms, char *err, size_t errlen)
{
    if (nbytes == 0) return 0;
    return guarded(err, errlen, [&] {
        gloo::ScatterOptions opts(g->context);
        if (g->context->rank == root) {
            std::vector<uint8_t *> ptrs;
            for (int i = 0; i < g->context->size; i++) ptrs.push_back(static_cast<uint8_t *>(ins[i]));
            opts.setInputs(ptrs, nbytes);
        }
        opts.setOutput(static_cast<uint8_t *>(out), nbytes);
        opts.setRoot(root);
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::scatter(opts);
    });
}

int pct_gloo_alltoallv(pct_gloo *g, const void *in, const int64_t *in_bytes, void *out, const int64_t *out_bytes,
                       uint32_t tag, int64_t timeout_ms, char *err, size_t errlen)
{
    return guarded(err, errlen, [&] {
        gloo::AlltoallvOptions opts(g->context);
        std::vector<int64_t> ib(in_bytes, in_bytes + g->context->size), ob(out_bytes, out_bytes + g->context->size);
        opts.setInput(static_cast<uint8_t *>(const_cast<void *>(in)), ib);
        opts.setOutput(static_cast<uint8_t *>(out), ob);
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::alltoallv(opts);
    });
}

int pct_gloo_barrier(pct_gloo *g, uint32_t tag, int64_t timeout_ms, char *err, size_t errlen)
{
    return guarded(err, errlen, [&] {
        gloo::BarrierOptions opts(g->context);
        opts.setTag(tag);
        opts.setTimeout(ms(timeout_ms));
        gloo::barrier(opts);
    });
}

// Note [p2p slots]: point-to-point messages use their own slot space (prefix 0x10 in the top
// byte), so a user's tag never collides with a collective's.
static uint64_t p2p_slot(uint64_t tag) { return (uint64_t(0x10) << 56) | (tag & 0x00ffffffffffffffull); }

pct_gloo_p2p *pct_gloo_send(pct_gloo *g, void *buf, size_t nbytes, int dst, uint64_t tag, char *err, size_t errlen)
{
    pct_gloo_p2p *p = nullptr;
    guarded(err, errlen, [&] {
        std::unique_ptr<pct_gloo_p2p> made(new pct_gloo_p2p());
        made->buf = g->context->createUnboundBuffer(buf, nbytes);
        made->is_send = true;
        made->buf->send(dst, p2p_slot(tag));
        p = made.release();
    });
    return p;
}

pct_gloo_p2p *pct_gloo_recv(pct_gloo *g, void *buf, size_t nbytes, int src, uint64_t tag, char *err, size_t errlen)
{
    pct_gloo_p2p *p = nullptr;
    guarded(err, errlen, [&] {
        std::unique_ptr<pct_gloo_p2p> made(new pct_gloo_p2p());
        made->buf = g->context->createUnboundBuffer(buf, nbytes);
        made->is_send = false;
        if (src >= 0) {
            made->buf->recv(src, p2p_slot(tag));
        } else {
            std::vector<int> all;
            for (int i = 0; i < g->context->size; i++)
                if (i != g->context->rank) all.push_back(i);
            made->buf->recv(all, p2p_slot(tag));
        }
        p = made.release();
    });
    return p;
}

int pct_gloo_p2p_wait(pct_gloo_p2p *p, int64_t timeout_ms, int *peer, char *err, size_t errlen)
{
    return guarded(err, errlen, [&] {
        bool ok = p->is_send ? p->buf->waitSend(peer, ms(timeout_ms)) : p->buf->waitRecv(peer, ms(timeout_ms));
        if (!ok) throw std::runtime_error("Gloo: the send or receive was aborted");
    });
}

void pct_gloo_p2p_free(pct_gloo_p2p *p)
{
    delete p;
}

} // extern "C"
