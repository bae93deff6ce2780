#ifndef ISLAND_CCRYPTO_SHIM_H
#define ISLAND_CCRYPTO_SHIM_H
// OpenSSL's libcrypto (Debian's libssl-dev), for its digests: EVP_Digest with EVP_sha256.
#include <openssl/evp.h>
#endif
