/* o200k_base token counts in C: the ranks held in 4 MB, each piece merged as tiktoken merges it.
 *
 * jurist counts o200k tokens of every answer (Arena-Hard's style metadata). tiktoken's CoreBPE holds the
 * 200k tokens three times over (47 MB resident); a Python dict of them holds 17 MB and merges at ~15 us a
 * piece. This module keeps the tokens' bytes in one buffer, their starts, and an open-addressing table of
 * ranks (2^19 slots), and counts a list of pieces (the encoding's pattern, run by the regex module, cuts
 * them in Python) in one call. The merge is tiktoken's byte_pair_merge: the adjacent pair of lowest rank
 * joined first, the leftmost of equal ranks, until no pair is a token. A piece longer than long_piece
 * bytes that is no token goes to the Python callable given (tiktoken's near-linear merge): this merge's
 * steps grow with the square of a piece's length.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define NO_TOKEN UINT32_MAX
#define ABI_VERSION 1
#define STACK_PIECE 256

typedef struct {
    PyObject_HEAD
    unsigned char *bytes; /* every token's bytes, in rank order */
    uint32_t *starts;     /* token r is bytes[starts[r] .. starts[r + 1]] */
    uint32_t *slots;      /* rank + 1 of the token hashed there (0: empty), linear probing */
    uint32_t mask;        /* slots - 1 (a power of two) */
    uint32_t size;        /* tokens */
    Py_ssize_t longest;   /* bytes of the longest token: a longer span is never one */
    Py_ssize_t long_piece;
    PyObject *long_count; /* callable(bytes) -> int, for a piece over long_piece bytes */
} Ranks;

static uint32_t hash_bytes(const unsigned char *data, Py_ssize_t size) {
    uint32_t hash = 2166136261u; /* FNV-1a */
    for (Py_ssize_t i = 0; i < size; i++) {
        hash = (hash ^ data[i]) * 16777619u;
    }
    return hash ^ (hash >> 15);
}

static uint32_t rank_of(const Ranks *self, const unsigned char *data, Py_ssize_t size) {
    if (size > self->longest) {
        return NO_TOKEN;
    }
    uint32_t slot = hash_bytes(data, size) & self->mask;
    for (;;) {
        uint32_t held = self->slots[slot];
        if (held == 0) {
            return NO_TOKEN;
        }
        uint32_t rank = held - 1;
        uint32_t start = self->starts[rank];
        if ((Py_ssize_t)(self->starts[rank + 1] - start) == size && memcmp(self->bytes + start, data, size) == 0) {
            return rank;
        }
        slot = (slot + 1) & self->mask;
    }
}

/* Tokens byte-pair merging leaves of data (size >= 2): bounds[i] starts part i, pairs[i] is the rank of
 * parts i and i + 1 joined; joining parts i and i + 1 changes only the pairs on either side of it. */
static Py_ssize_t merged_parts(const Ranks *self, const unsigned char *data, Py_ssize_t size, uint32_t *bounds,
                               uint32_t *pairs) {
    Py_ssize_t parts = size, i;
    for (i = 0; i <= size; i++) {
        bounds[i] = (uint32_t)i;
    }
    for (i = 0; i + 1 < size; i++) {
        pairs[i] = rank_of(self, data + i, 2);
    }
    while (parts > 1) {
        Py_ssize_t best = 0;
        uint32_t lowest = pairs[0];
        for (i = 1; i + 1 < parts; i++) {
            if (pairs[i] < lowest) {
                lowest = pairs[i];
                best = i;
            }
        }
        if (lowest == NO_TOKEN) {
            break;
        }
        memmove(bounds + best + 1, bounds + best + 2, (size_t)(parts - best - 1) * sizeof(uint32_t));
        memmove(pairs + best, pairs + best + 1, (size_t)(parts - best - 2) * sizeof(uint32_t));
        parts--;
        if (best + 1 < parts) {
            pairs[best] = rank_of(self, data + bounds[best], bounds[best + 2] - bounds[best]);
        }
        if (best > 0) {
            pairs[best - 1] = rank_of(self, data + bounds[best - 1], bounds[best + 1] - bounds[best - 1]);
        }
    }
    return parts;
}

static int decode_base64(const unsigned char *text, Py_ssize_t size, unsigned char *out, Py_ssize_t *written) {
    static int8_t values[256];
    static int ready = 0;
    if (!ready) {
        const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        memset(values, -1, sizeof values);
        for (int k = 0; k < 64; k++) {
            values[(unsigned char)alphabet[k]] = (int8_t)k;
        }
        ready = 1;
    }
    if (size == 0 || size % 4 != 0) {
        return -1;
    }
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < size; i += 4) {
        int a = values[text[i]], b = values[text[i + 1]];
        int c = text[i + 2] == '=' && i + 4 == size ? -2 : values[text[i + 2]];
        int d = text[i + 3] == '=' && i + 4 == size ? -2 : values[text[i + 3]];
        if (a < 0 || b < 0 || c == -1 || d == -1 || (c == -2 && d != -2)) {
            return -1;
        }
        out[n++] = (unsigned char)(a << 2 | b >> 4);
        if (c >= 0) {
            out[n++] = (unsigned char)(b << 4 | c >> 2);
            if (d >= 0) {
                out[n++] = (unsigned char)(c << 6 | d);
            }
        }
    }
    *written = n;
    return 0;
}

/* Reads a .tiktoken file's text (base64 token, space, rank, newline; each rank its line number). */
static int read_ranks(Ranks *self, const unsigned char *text, Py_ssize_t size) {
    Py_ssize_t lines = 0, i;
    for (i = 0; i < size; i++) {
        lines += text[i] == '\n';
    }
    if (size > 0 && text[size - 1] != '\n') {
        lines++;
    }
    if (lines == 0 || lines >= (Py_ssize_t)UINT32_MAX / 4 || size >= (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "the ranks file has no lines, or too many");
        return -1;
    }
    uint32_t slots = 1;
    while (slots < (uint32_t)lines * 2) {
        slots <<= 1;
    }
    self->bytes = PyMem_Malloc((size_t)size);
    self->starts = PyMem_Malloc(((size_t)lines + 1) * sizeof(uint32_t));
    self->slots = PyMem_Calloc(slots, sizeof(uint32_t));
    if (self->bytes == NULL || self->starts == NULL || self->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    self->mask = slots - 1;
    Py_ssize_t at = 0, filled = 0, line = 0;
    while (at < size) {
        Py_ssize_t end = at, space = -1;
        while (end < size && text[end] != '\n') {
            if (text[end] == ' ' && space < 0) {
                space = end;
            }
            end++;
        }
        Py_ssize_t written = 0;
        uint64_t rank = 0;
        int digits = 0, bad = space < 0;
        if (!bad) {
            for (Py_ssize_t k = space + 1; k < end; k++) {
                if (text[k] < '0' || text[k] > '9' || ++digits > 9) {
                    bad = 1;
                    break;
                }
                rank = rank * 10 + (uint64_t)(text[k] - '0');
            }
        }
        if (bad || digits == 0 || rank != (uint64_t)line ||
            decode_base64(text + at, space - at, self->bytes + filled, &written) != 0) {
            PyErr_Format(PyExc_ValueError, "ranks file line %zd: expected 'BASE64 %zd'", line + 1, line);
            return -1;
        }
        self->starts[line] = (uint32_t)filled;
        self->starts[line + 1] = (uint32_t)(filled + written);
        if (rank_of(self, self->bytes + filled, written) != NO_TOKEN) {
            PyErr_Format(PyExc_ValueError, "ranks file line %zd: a token ranked twice", line + 1);
            return -1;
        }
        uint32_t slot = hash_bytes(self->bytes + filled, written) & self->mask;
        while (self->slots[slot] != 0) {
            slot = (slot + 1) & self->mask;
        }
        self->slots[slot] = (uint32_t)line + 1;
        if (written > self->longest) {
            self->longest = written;
        }
        filled += written;
        line++;
        self->size = (uint32_t)line;
        at = end + 1;
    }
    unsigned char *shrunk = PyMem_Realloc(self->bytes, filled > 0 ? (size_t)filled : 1);
    if (shrunk != NULL) {
        self->bytes = shrunk;
    }
    return 0;
}

static int Ranks_init(Ranks *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"ranks_file", "long_piece", "long_count", NULL};
    Py_buffer text;
    Py_ssize_t long_piece;
    PyObject *long_count;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*nO", keywords, &text, &long_piece, &long_count)) {
        return -1;
    }
    if (self->bytes != NULL || self->slots != NULL) {
        PyBuffer_Release(&text);
        PyErr_SetString(PyExc_RuntimeError, "Ranks is initialised once");
        return -1;
    }
    if (!PyCallable_Check(long_count) || long_piece < 2) {
        PyBuffer_Release(&text);
        PyErr_SetString(PyExc_ValueError, "long_piece must be >= 2 and long_count callable");
        return -1;
    }
    self->long_piece = long_piece;
    Py_INCREF(long_count);
    self->long_count = long_count;
    int failed = read_ranks(self, text.buf, text.len);
    PyBuffer_Release(&text);
    return failed;
}

static void Ranks_dealloc(Ranks *self) {
    PyMem_Free(self->bytes);
    PyMem_Free(self->starts);
    PyMem_Free(self->slots);
    Py_XDECREF(self->long_count);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int ready(const Ranks *self) {
    if (self->slots == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Ranks was not initialised");
        return 0;
    }
    return 1;
}

/* Tokens of one piece's UTF-8 (-1 with an exception set). */
static Py_ssize_t piece_tokens(const Ranks *self, const unsigned char *data, Py_ssize_t size, uint32_t *scratch,
                               Py_ssize_t scratch_size) {
    if (size <= 1) {
        return size;
    }
    if (rank_of(self, data, size) != NO_TOKEN) {
        return 1;
    }
    if (size > self->long_piece) {
        PyObject *piece = PyBytes_FromStringAndSize((const char *)data, size);
        if (piece == NULL) {
            return -1;
        }
        PyObject *counted = PyObject_CallOneArg(self->long_count, piece);
        Py_DECREF(piece);
        if (counted == NULL) {
            return -1;
        }
        Py_ssize_t tokens = PyLong_AsSsize_t(counted);
        Py_DECREF(counted);
        return tokens == -1 && PyErr_Occurred() ? -1 : tokens;
    }
    if (size + 1 <= scratch_size) {
        return merged_parts(self, data, size, scratch, scratch + size + 1);
    }
    uint32_t *buffer = PyMem_Malloc((size_t)(2 * size + 1) * sizeof(uint32_t));
    if (buffer == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t tokens = merged_parts(self, data, size, buffer, buffer + size + 1);
    PyMem_Free(buffer);
    return tokens;
}

static PyObject *Ranks_count(Ranks *self, PyObject *pieces) {
    if (!ready(self)) {
        return NULL;
    }
    PyObject *sequence = PySequence_Fast(pieces, "count() takes a list of str pieces");
    if (sequence == NULL) {
        return NULL;
    }
    uint32_t scratch[2 * STACK_PIECE + 1];
    Py_ssize_t total = 0, n = PySequence_Fast_GET_SIZE(sequence);
    PyObject **items = PySequence_Fast_ITEMS(sequence);
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_ssize_t size;
        const char *data;
        if (PyUnicode_Check(items[k])) {
            data = PyUnicode_AsUTF8AndSize(items[k], &size); /* raises UnicodeEncodeError on a lone surrogate */
        } else {
            PyErr_SetString(PyExc_TypeError, "count() takes a list of str pieces");
            data = NULL;
        }
        Py_ssize_t tokens = data == NULL ? -1
                                         : piece_tokens(self, (const unsigned char *)data, size, scratch, STACK_PIECE);
        if (tokens < 0) {
            Py_DECREF(sequence);
            return NULL;
        }
        total += tokens;
    }
    Py_DECREF(sequence);
    return PyLong_FromSsize_t(total);
}

/* o200k's pattern on ASCII text, alternative by alternative (jurist.tokens.encoding.O200K_PATTERN): where a
 * piece starts, the end regex would give it, or -1 where that depends on a character outside ASCII (whose
 * Unicode classes this does not know): the caller's regex takes over from there. */
enum { UPPER, LOWER, DIGIT, NEWLINE, SPACE, OTHER, WIDE, END };

static int class_at(int kind, const void *text, Py_ssize_t size, Py_ssize_t i) {
    if (i >= size) {
        return END;
    }
    Py_UCS4 c = PyUnicode_READ(kind, text, i);
    if (c >= 128) {
        return WIDE;
    }
    if (c >= 'A' && c <= 'Z') {
        return UPPER;
    }
    if (c >= 'a' && c <= 'z') {
        return LOWER;
    }
    if (c >= '0' && c <= '9') {
        return DIGIT;
    }
    if (c == '\r' || c == '\n') {
        return NEWLINE;
    }
    if (c == ' ' || c == '\t' || c == '\v' || c == '\f') {
        return SPACE; /* with \r and \n, ASCII's Unicode White_Space (0x1c-0x1f are not) */
    }
    return OTHER;
}

static Py_UCS4 char_at(int kind, const void *text, Py_ssize_t size, Py_ssize_t i) {
    return i < size ? PyUnicode_READ(kind, text, i) : 0;
}

/* (?i:'s|'t|'re|'ve|'m|'ll|'d)? after a word ending at end. */
static Py_ssize_t contraction_end(int kind, const void *text, Py_ssize_t size, Py_ssize_t end) {
    if (char_at(kind, text, size, end) != '\'') {
        return end;
    }
    Py_UCS4 first = char_at(kind, text, size, end + 1);
    if (first >= 128) {
        return -1; /* case folding outside ASCII (U+017F folds to s) */
    }
    first |= 0x20;
    if (first == 's' || first == 't' || first == 'm' || first == 'd') {
        return end + 2;
    }
    if (first != 'r' && first != 'v' && first != 'l') {
        return end;
    }
    Py_UCS4 second = char_at(kind, text, size, end + 2);
    if (second >= 128) {
        return -1;
    }
    second |= 0x20;
    return second == (first == 'l' ? 'l' : 'e') ? end + 3 : end;
}

static Py_ssize_t ascii_piece_end(int kind, const void *text, Py_ssize_t size, Py_ssize_t at) {
    int first = class_at(kind, text, size, at);
    if (first == WIDE) {
        return -1;
    }
    if (first != DIGIT && first != NEWLINE) { /* 1, 2: [^\r\n\p{L}\p{N}]? then a word */
        Py_ssize_t start = first == SPACE || first == OTHER ? at + 1 : at, upper = start, lower;
        while (class_at(kind, text, size, upper) == UPPER) {
            upper++;
        }
        if (class_at(kind, text, size, upper) == WIDE) {
            return -1;
        }
        for (lower = upper; class_at(kind, text, size, lower) == LOWER; lower++) {
        }
        if (lower > upper) {
            return class_at(kind, text, size, lower) == WIDE ? -1 : contraction_end(kind, text, size, lower);
        }
        if (upper > start) {
            return contraction_end(kind, text, size, upper);
        }
    }
    if (first == DIGIT) { /* 3: \p{N}{1,3} */
        Py_ssize_t end = at + 1;
        while (end < at + 3 && class_at(kind, text, size, end) == DIGIT) {
            end++;
        }
        return end < at + 3 && class_at(kind, text, size, end) == WIDE ? -1 : end;
    }
    if (first == SPACE || first == OTHER) { /* 4: " ?[^\s\p{L}\p{N}]+[\r\n/]*" */
        Py_ssize_t start = char_at(kind, text, size, at) == ' ' ? at + 1 : at, end = start;
        while (class_at(kind, text, size, end) == OTHER) {
            end++;
        }
        if (class_at(kind, text, size, end) == WIDE) {
            return -1;
        }
        if (end > start) {
            Py_UCS4 next;
            while ((next = char_at(kind, text, size, end)) == '\r' || next == '\n' || next == '/') {
                end++;
            }
            return end;
        }
        if (first == OTHER) {
            return -1; /* unreachable: an OTHER starts alternative 4's run */
        }
    }
    /* 5: \s*[\r\n]+   6: \s+(?!\S)   7: \s+ */
    Py_ssize_t end = at, last_newline = -1;
    int seen;
    while ((seen = class_at(kind, text, size, end)) == SPACE || seen == NEWLINE) {
        if (seen == NEWLINE) {
            last_newline = end;
        }
        end++;
    }
    if (seen == WIDE) {
        return -1; /* U+00A0, U+3000, ...: the run may go on */
    }
    if (last_newline >= 0) {
        return last_newline + 1;
    }
    return seen == END || end - at < 2 ? end : end - 1;
}

/* (tokens, where it stopped) of text from at: its ASCII pieces counted in C, up to the first piece whose
 * end depends on a character outside ASCII (or the text's end). */
static PyObject *Ranks_scan(Ranks *self, PyObject *args) {
    PyObject *text;
    Py_ssize_t at;
    if (!ready(self) || !PyArg_ParseTuple(args, "Un", &text, &at)) {
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t size = PyUnicode_GET_LENGTH(text), total = 0;
    if (at < 0 || at > size) {
        PyErr_SetString(PyExc_IndexError, "scan() starts inside the text");
        return NULL;
    }
    uint32_t scratch[2 * STACK_PIECE + 1];
    unsigned char copied[STACK_PIECE];
    while (at < size) {
        Py_ssize_t end = ascii_piece_end(kind, data, size, at), tokens;
        if (end < 0) {
            break;
        }
        Py_ssize_t length = end - at;
        if (kind == PyUnicode_1BYTE_KIND) { /* ASCII pieces: their characters are their UTF-8 */
            tokens = piece_tokens(self, (const unsigned char *)data + at, length, scratch, STACK_PIECE);
        } else {
            unsigned char *bytes = length <= STACK_PIECE ? copied : PyMem_Malloc((size_t)length);
            if (bytes == NULL) {
                PyErr_NoMemory();
                return NULL;
            }
            for (Py_ssize_t i = 0; i < length; i++) {
                bytes[i] = (unsigned char)PyUnicode_READ(kind, data, at + i);
            }
            tokens = piece_tokens(self, bytes, length, scratch, STACK_PIECE);
            if (bytes != copied) {
                PyMem_Free(bytes);
            }
        }
        if (tokens < 0) {
            return NULL;
        }
        total += tokens;
        at = end;
    }
    return Py_BuildValue("nn", total, at);
}

static PyObject *Ranks_merged(Ranks *self, PyObject *data) {
    Py_buffer view;
    if (!ready(self) || PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) != 0) {
        return NULL;
    }
    uint32_t scratch[2 * STACK_PIECE + 1];
    Py_ssize_t tokens = piece_tokens(self, view.buf, view.len, scratch, STACK_PIECE);
    PyBuffer_Release(&view);
    return tokens < 0 ? NULL : PyLong_FromSsize_t(tokens);
}

static PyObject *Ranks_rank(Ranks *self, PyObject *data) {
    Py_buffer view;
    if (!ready(self) || PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) != 0) {
        return NULL;
    }
    uint32_t rank = rank_of(self, view.buf, view.len);
    PyBuffer_Release(&view);
    if (rank == NO_TOKEN) {
        Py_RETURN_NONE;
    }
    return PyLong_FromUnsignedLong(rank);
}

static Py_ssize_t Ranks_len(Ranks *self) { return self->size; }

static PyObject *Ranks_sizeof(Ranks *self, PyObject *Py_UNUSED(ignored)) {
    size_t held = sizeof(Ranks) + (self->slots ? ((size_t)self->mask + 1) * sizeof(uint32_t) : 0) +
                  ((size_t)self->size + 1) * sizeof(uint32_t) +
                  (self->size ? self->starts[self->size] : 0);
    return PyLong_FromSize_t(held);
}

static PyMethodDef Ranks_methods[] = {
    {"count", (PyCFunction)Ranks_count, METH_O, "Tokens of a list of pieces (str), summed."},
    {"scan", (PyCFunction)Ranks_scan, METH_VARARGS, "(tokens, stop) of a text's ASCII pieces from a start."},
    {"merged", (PyCFunction)Ranks_merged, METH_O, "Tokens of one piece's bytes."},
    {"rank", (PyCFunction)Ranks_rank, METH_O, "The rank of a token's bytes, or None."},
    {"__sizeof__", (PyCFunction)Ranks_sizeof, METH_NOARGS, "Bytes held."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods Ranks_as_sequence = {.sq_length = (lenfunc)Ranks_len};

static PyTypeObject RanksType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "jurist.tokens._o200k.Ranks",
    .tp_doc = PyDoc_STR("A .tiktoken file's ranks, held compactly, and counts of pieces merged from them."),
    .tp_basicsize = sizeof(Ranks),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Ranks_init,
    .tp_dealloc = (destructor)Ranks_dealloc,
    .tp_methods = Ranks_methods,
    .tp_as_sequence = &Ranks_as_sequence,
};

static struct PyModuleDef o200k_module = {
    PyModuleDef_HEAD_INIT, "_o200k", "o200k_base counts merged in C (see jurist.tokens.pieces).", -1, NULL,
};

PyMODINIT_FUNC PyInit__o200k(void) {
    if (PyType_Ready(&RanksType) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&o200k_module);
    if (module == NULL) {
        return NULL;
    }
    Py_INCREF(&RanksType);
    if (PyModule_AddObject(module, "Ranks", (PyObject *)&RanksType) < 0 ||
        PyModule_AddIntConstant(module, "ABI_VERSION", ABI_VERSION) < 0) {
        Py_DECREF(&RanksType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
