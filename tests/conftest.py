import ipaddress
import socket

import pytest
import torch


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Fail any test that connects anywhere but this machine."""
    real_connect = socket.socket.connect

    def guarded_connect(sock, address):
        host = address[0] if isinstance(address, tuple) else None
        if host is not None:
            try:
                local = ipaddress.ip_address(host).is_loopback
            except ValueError:
                local = host == "localhost"
            if not local:
                raise RuntimeError(f"tests must not use the network (tried to connect to {address})")
        return real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)


@pytest.fixture(scope="module")
def one_thread():
    """Run a module's small models on one thread (fastest, and reproducible); restore afterwards."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
