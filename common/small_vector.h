// SmallVector: a vector that holds its first N elements in place and spills to the heap only
// past them. The featurizer builds regions and loop bounds (one Span per dimension, rarely more
// than four) millions of times per search; as std::vectors they were most of its allocations
// (about 200 per stage featurized) and a third of its time in malloc and free.
//
// Only for trivially copyable element types (elements are copied bytewise, never destroyed),
// with the subset of std::vector's interface the project uses.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <new>
#include <type_traits>

namespace schedforge {

template<typename T, size_t N>
class SmallVector {
    static_assert(std::is_trivially_copyable_v<T>, "SmallVector copies its elements bytewise");
    static_assert(N > 0, "SmallVector needs room for one element in place");

public:
    using value_type = T;
    using size_type = size_t;
    using reference = T &;
    using const_reference = const T &;
    using iterator = T *;
    using const_iterator = const T *;

    SmallVector() noexcept {} // user-provided: the in-place storage starts uninitialized
    explicit SmallVector(size_t n, const T &value = T()) { assign(n, value); }
    SmallVector(std::initializer_list<T> values) { assign(values.begin(), values.end()); }
    template<typename It, typename = typename std::iterator_traits<It>::iterator_category>
    SmallVector(It first, It last) {
        assign(first, last);
    }
    SmallVector(const SmallVector &o) { copy_from(o); }
    SmallVector(SmallVector &&o) noexcept { take(o); }
    SmallVector &operator=(const SmallVector &o) {
        if (this != &o) copy_from(o);
        return *this;
    }
    SmallVector &operator=(SmallVector &&o) noexcept {
        if (this != &o) {
            release();
            take(o);
        }
        return *this;
    }
    ~SmallVector() { release(); }

    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    size_t capacity() const { return capacity_; }
    T *data() { return data_; }
    const T *data() const { return data_; }
    T *begin() { return data_; }
    T *end() { return data_ + size_; }
    const T *begin() const { return data_; }
    const T *end() const { return data_ + size_; }
    T &operator[](size_t i) { return data_[i]; }
    const T &operator[](size_t i) const { return data_[i]; }
    T &front() { return data_[0]; }
    const T &front() const { return data_[0]; }
    T &back() { return data_[size_ - 1]; }
    const T &back() const { return data_[size_ - 1]; }

    void reserve(size_t n) {
        if (n <= capacity_) return;
        T *grown = static_cast<T *>(std::malloc(n * sizeof(T)));
        if (!grown) throw std::bad_alloc();
        if (size_) std::memcpy(static_cast<void *>(grown), data_, size_ * sizeof(T));
        release();
        data_ = grown;
        capacity_ = n;
    }
    void resize(size_t n, T value = T()) { // by value: it may be an element of this vector
        if (n > capacity_) reserve(std::max(n, 2 * capacity_));
        for (size_t i = size_; i < n; i++) data_[i] = value;
        size_ = n;
    }
    void clear() { size_ = 0; }
    void push_back(const T &value) {
        if (size_ == capacity_) return grow_and_push(value);
        data_[size_++] = value;
    }
    template<typename... Args>
    T &emplace_back(Args &&...args) {
        push_back(T{std::forward<Args>(args)...});
        return back();
    }
    void pop_back() { size_--; }
    void assign(size_t n, T value) {
        size_ = 0;
        resize(n, value);
    }
    // Not from a range of this vector's own elements (the storage may move first).
    template<typename It, typename = typename std::iterator_traits<It>::iterator_category>
    void assign(It first, It last) {
        const size_t n = size_t(std::distance(first, last));
        size_ = 0;
        reserve(n);
        std::copy(first, last, data_);
        size_ = n;
    }
    T *erase(const T *first, const T *last) {
        T *at = data_ + (first - data_);
        const size_t tail = size_t(end() - last);
        if (first != last && tail) std::memmove(static_cast<void *>(at), last, tail * sizeof(T));
        size_ -= size_t(last - first);
        return at;
    }
    T *erase(const T *at) { return erase(at, at + 1); }

    bool operator==(const SmallVector &o) const { return std::equal(begin(), end(), o.begin(), o.end()); }
    bool operator!=(const SmallVector &o) const { return !(*this == o); }

private:
    // The slow path of push_back, out of line. `value` is a copy: the caller's may live in the
    // storage being moved.
    [[gnu::noinline]] void grow_and_push(T value) {
        reserve(2 * capacity_);
        data_[size_++] = value;
    }
    bool inline_storage() const { return data_ == reinterpret_cast<const T *>(inline_); }
    void release() {
        if (!inline_storage()) std::free(data_);
        data_ = reinterpret_cast<T *>(inline_);
        capacity_ = N;
    }
    // Copies o's elements here. What fits in place is copied whole, a fixed size the compiler
    // inlines (a call to memmove per copy of a few Spans cost 5% of a search); the bytes past
    // o's size are copied but never read.
    void copy_from(const SmallVector &o) {
        if (o.size_ <= N) {
            release();
            std::memcpy(static_cast<void *>(inline_), o.data_, N * sizeof(T)); // o's storage holds at least N
        } else {
            size_ = 0;
            reserve(o.size_);
            std::memcpy(static_cast<void *>(data_), o.data_, o.size_ * sizeof(T));
        }
        size_ = o.size_;
    }
    // Moves o's elements here (this is empty and inline); o is left empty.
    void take(SmallVector &o) {
        if (o.inline_storage()) {
            std::memcpy(static_cast<void *>(inline_), o.inline_, N * sizeof(T));
        } else {
            data_ = o.data_;
            capacity_ = o.capacity_;
            o.data_ = reinterpret_cast<T *>(o.inline_);
            o.capacity_ = N;
        }
        size_ = o.size_;
        o.size_ = 0;
    }

    T *data_ = reinterpret_cast<T *>(inline_);
    size_t size_ = 0, capacity_ = N;
    alignas(T) unsigned char inline_[N * sizeof(T)];
};

} // namespace schedforge
