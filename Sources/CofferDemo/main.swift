import Coffer
print("placeholder")
