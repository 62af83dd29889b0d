"""The NoC's golden side: the flit layout (flit), the mesh's geometry and routing (mesh) and synthetic traffic (traffic)."""
