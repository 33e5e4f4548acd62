"""``nerts-lan doctor``: what keeps this laptop off the LAN, checked and said in words."""
