"""The treasury: the fixed note supply of 1,500,000 marks, the faucet and /treasury (Book V.5).

It issues notes from the reserve as treasury-signed certificates, each issue an event in its
signed log; it never mints beyond the manifest's note set.
"""
