#include "runner/system_allocator.h"

#include <Halide.h>

#include <cstdint>
#include <cstdlib>
#include <dlfcn.h>
#include <string>

namespace schedforge::runner {

namespace {

struct CLibrary {
    void *(*malloc)(size_t) = std::malloc;
    void (*free)(void *) = std::free;
};

// Looked up in libc.so.6's own scope, which the allocator the program links is not in; resolved
// as the program loads (before any worker forks, and never inside a timed run).
CLibrary find_c_library() {
    CLibrary c;
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (!libc) return c; // not glibc: its malloc is the process's
    void *m = dlsym(libc, "malloc"), *f = dlsym(libc, "free");
    if (m && f) {
        c.malloc = reinterpret_cast<void *(*)(size_t)>(m);
        c.free = reinterpret_cast<void (*)(void *)>(f);
    }
    dlclose(libc);
    return c;
}

const CLibrary c_library = find_c_library();

std::string library_of(void *function) {
    Dl_info info;
    if (!dladdr(function, &info) || !info.dli_fname) return "unknown";
    const std::string path = info.dli_fname;
    return path.substr(path.rfind('/') + 1);
}

} // namespace

std::string process_allocator() { return library_of(dlsym(RTLD_DEFAULT, "malloc")); }

std::string system_allocator() { return library_of(reinterpret_cast<void *>(c_library.malloc)); }

void *system_malloc(size_t bytes) {
    constexpr size_t a = kSystemAllocatorAlignment;
    // Room to align, and 8 bytes of slack past the end (Halide may read that far).
    if (bytes > SIZE_MAX - a - 8) return nullptr;
    void *base = c_library.malloc(bytes + a + 8);
    if (!base) return nullptr;
    void *p = reinterpret_cast<void *>((reinterpret_cast<uintptr_t>(base) + a) & ~uintptr_t(a - 1));
    static_cast<void **>(p)[-1] = base; // malloc's chunks are 16-aligned: p - 8 lies inside them
    return p;
}

void system_free(void *p) {
    if (p) c_library.free(static_cast<void **>(p)[-1]);
}

void claim_main_arena() {
    // A single-threaded process's malloc serves it from the main arena and binds the thread there.
    system_free(system_malloc(1));
}

void use_system_allocator(Halide::Pipeline &p) {
    Halide::JITHandlers &h = p.jit_handlers();
    h.custom_malloc = [](Halide::JITUserContext *, size_t bytes) { return system_malloc(bytes); };
    h.custom_free = [](Halide::JITUserContext *, void *q) { system_free(q); };
}

} // namespace schedforge::runner
