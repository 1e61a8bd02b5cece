/* pf_tls_mod.c -- module for pitfall 1: general-dynamic TLS.
 *
 * Loaded with dlopen, so its TLS block is allocated lazily per thread by
 * __tls_get_addr on first access -- through malloc.
 */
__attribute__((tls_model("global-dynamic"))) __thread int tlsmod_value;
__attribute__((tls_model("global-dynamic"))) __thread char tlsmod_big[8192];

int tlsmod_touch(int k)
{
    tlsmod_big[k] = (char)k;
    tlsmod_value = k;
    return tlsmod_value + tlsmod_big[k] - k;
}
